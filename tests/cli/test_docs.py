"""Docs that cannot drift (issue 61): every `fslab …` command line in README.md and
docs/*.md names a subcommand and flags that `--help` lists; every examples/*.toml passes
`--dry-run`; docs/user-guide.md describes the slices and the ceiling in the words `fslab
run --help` prints (core/descriptions.py), and the README's short account of them holds
the code's numbers; every link leads to a page and a heading that exist; the README
starts with the answer (≤ 180 lines, the quick start's flags), its job file is measured
as it says, its tune line is what the example's dry run plans, and the figures its
explanation quotes are the generated sample's."""

import functools
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fslab.analysis.cells.cachebound import CEILING_MARGIN
from fslab.core.descriptions import CEILING, SLICES
from fslab.plan.schema import DEFAULT_ROUNDS
from fslab.run.ceiling import CEILING_ITERATIONS
from fslab.run.pieces import MIN_SLICE_MS
from tests.conftest import REPO, fslab_here

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*```")
INLINE = re.compile(r"`(fslab [^`]+)`")
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
OPTION_LINE = re.compile(r"^\s{2}(-\S.*?)(?:\s{2,}|$)")


def command_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, command) of every fslab command in a page: a line of a code block
    that starts with `fslab ` (continued over lines ending in a backslash, comments cut)
    and every inline `fslab …`."""
    found: list[tuple[int, str]] = []
    lines = path.read_text().splitlines()
    in_code, pending, start = False, "", 0
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            text = line.split(" #", 1)[0].strip().removeprefix("$ ").removeprefix("sudo ")
            if pending:
                pending += " " + text
            elif text.startswith("fslab "):
                pending, start = text, number
            if pending and not pending.endswith("\\"):
                found.append((start, pending))
                pending = ""
            elif pending:
                pending = pending[:-1]
            continue
        found += [(number, match) for match in INLINE.findall(line)]
    return found


@functools.cache
def help_of(*words: str) -> str:
    done = fslab_here(*words, "--help")
    assert done.returncode == 0, (words, done.stderr)
    return done.stdout


def subcommands(text: str) -> set[str]:
    listed = text.split("Commands:", 1)[1] if "Commands:" in text else ""
    return {line.split()[0] for line in listed.splitlines() if line.strip()}


def declared_flags(text: str) -> set[str]:
    """The flags an options list declares (its lines' first column, not their help)."""
    return {flag for line in text.splitlines() if (m := OPTION_LINE.match(line))
            for flag in FLAG.findall(m.group(1))}


def words_of(command: str) -> list[str]:
    command = re.sub(r"\$\([^)]*\)", "X", command)  # $(uname -r): the shell's, not ours
    try:
        return shlex.split(command)
    except ValueError:  # an unbalanced quote in prose: its words as they stand
        return command.split()


def problems_of(command: str) -> list[str]:
    """What in `command` --help does not know: its subcommand(s) and its flags."""
    words = words_of(command)[1:]
    path: list[str] = []
    while words and not words[0].startswith("-") and words[0] in subcommands(
            help_of(*path)):
        path.append(words.pop(0))
    if not path:
        return [f"no subcommand in {command!r}"] if words and not words[0].startswith(
            "-") and words[0] not in ("...", "…") else []
    shown = help_of(*path)
    known = declared_flags(shown)
    flags = [m for word in words if word.startswith("-")
             for m in FLAG.findall(word.split("=", 1)[0])[:1]]
    return [f"fslab {' '.join(path)}: no {flag}" for flag in flags
            if flag not in known and flag not in ("-", "--")]


EVERY = [(path.relative_to(REPO), number, command) for path in DOCS
         for number, command in command_lines(path)]


def test_the_pages_have_commands_to_check():
    assert len(EVERY) > 50 and any(str(p) == "README.md" for p, _, _ in EVERY)


def test_every_fslab_command_in_the_docs_exists_with_its_flags():
    wrong = [f"{path}:{number}: {problem}" for path, number, command in EVERY
             for problem in problems_of(command)]
    assert not wrong, "\n".join(wrong)


def test_a_wrong_flag_or_subcommand_is_caught():
    assert problems_of("fslab run --fs ext4 --no-such-flag") == ["fslab run: no --no-such-flag"]
    assert problems_of("fslab histroy list") == ["no subcommand in 'fslab histroy list'"]
    assert problems_of("fslab tune --budget 5m") == ["fslab tune: no --budget"]  # hidden
    assert problems_of("fslab run --label k=$(uname -r) --fs=ext4") == []


@pytest.mark.parametrize("example", sorted((REPO / "examples").glob("*.toml")),
                         ids=lambda p: p.name)
def test_every_example_file_passes_its_dry_run(example):
    """Its plan is printed; what only stops it on this machine (a cluster's shared
    directory that is not here) is said as `would stop`, never as an error."""
    command = "tune" if example.name.startswith("tune-") else "run"
    done = fslab_here(command, str(example), "--dry-run")
    assert "error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0 or all(line.startswith("would stop: ") for line in
                                       done.stderr.strip().splitlines()), done.stderr
    assert done.stdout.strip()


def test_the_user_guide_describes_slices_and_ceiling_as_the_help_does():
    guide = " ".join((REPO / "docs" / "user-guide.md").read_text().split())
    assert " ".join(SLICES.split()) in guide and " ".join(CEILING.split()) in guide


def test_the_sample_output_is_what_fslab_prints_now(tmp_path):
    """scripts/docs-samples --check: the page's sample against a simulated campaign run
    now, its words and order exactly, its numbers aside."""
    script = REPO / "scripts" / "docs-samples"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                          text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    page = (REPO / "docs" / "user-guide.md").read_text()
    assert "scripts/docs-samples -->\n\n```text\nVerdicts answer" in page


README = REPO / "README.md"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def section(text: str, heading: str) -> str:
    """A page's section from its `## heading` to the next `## `."""
    start = text.index(f"## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def flat(text: str) -> str:
    return " ".join(text.split())


def heading_anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation out, spaces
    to hyphens."""
    found, in_code = set(), False
    for line in page.read_text().splitlines():
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            found.add(re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower())
                      .replace(" ", "-"))
    return found


def test_every_link_leads_to_a_page_and_a_heading_that_exist():
    wrong = []
    for page in DOCS:
        in_code = False
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if FENCE.match(line):
                in_code = not in_code
            for target in [] if in_code else LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, anchor = target.partition("#")
                linked = page.parent / path if path else page
                if not linked.exists():
                    wrong.append(f"{page.relative_to(REPO)}:{number}: no {path}")
                elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(
                        linked):
                    wrong.append(f"{page.relative_to(REPO)}:{number}: no #{anchor} in {path}")
    assert not wrong, "\n".join(wrong)


def test_the_readme_starts_with_the_answer():
    text = README.read_text()
    assert len(text.splitlines()) <= 180
    quick = section(text, "Quick start")
    for flag in ("--lab", "--confirm-device", "--job-file", "--resolve", "--dry-run"):
        assert flag in quick, flag
    assert "extend it" not in text and "--iterations N" not in text
    assert text.index("make run") < text.index("## Quick start") < text.index(
        "## What the answer looks like") < text.index("## Where the results are")
    assert "(docs/glossary.md)" in text


def test_the_readmes_slices_and_ceiling_hold_the_codes_numbers():
    quick = flat(section(README.read_text(), "Quick start"))
    assert f"({MIN_SLICE_MS / 1000:g} s or more)" in quick
    assert f"in up to {DEFAULT_ROUNDS} rounds" in quick
    assert f"rounds of the first {CEILING_ITERATIONS} iterations" in quick
    assert f"above {CEILING_MARGIN:g}× it is **cache-bound**" in quick


def test_the_readmes_job_file_is_measured_as_it_says(tmp_path):
    """The quick start's job file, dry-run as the quick start runs it: the slices it
    quotes are the plan's."""
    text = README.read_text()
    job = tmp_path / "my.fio"
    job.write_text(re.search(r"```ini\n(.*?)```", text, re.DOTALL).group(1))
    quoted = re.search(r'the dry run says "([^"]+)"', flat(text)).group(1)
    done = fslab_here("run", "--fs", "ext4,xfs", "--job-file", str(job), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert f"{job.stem}: {quoted}," in done.stdout


def test_the_readmes_tune_line_is_what_the_examples_dry_run_plans():
    line = next(line for line in README.read_text().splitlines()
                if "`fslab tune examples/tune-ext4.toml`" in line)
    plan = fslab_here("tune", "examples/tune-ext4.toml", "--dry-run").stdout
    factors, configurations = re.search(r"(\d+) factors, (\d+) configurations", plan).groups()
    assert f"{factors} ext4 options, {configurations} configurations" in line
    stages = {m.group(1): m.group(2) for m in re.finditer(r"^(screen|race|confirm): (.*)$",
                                                          plan, re.MULTILINE)}
    screened = re.match(r"(\d+) configurations", stages["screen"]).group(1)
    assert f"a screen of {screened}" in line
    assert ("no race" in line) == stages["race"].startswith("none")
    assert "a confirmation" in line and not stages["confirm"].startswith("none")


def test_the_readmes_explanation_quotes_its_sample():
    """Every figure the explanation quotes (a ratio, IOPS, a latency, an iteration
    count) is in the generated sample above it: regenerated, the words must follow."""
    text = README.read_text()
    sample = text[text.index("<!-- sample:"):text.index("<!-- end of sample -->")]
    told = section(text, "What the answer looks like").split("How to read it:", 1)[1]
    figures = re.findall(r"\d+(?:\.\d+)?(?:–\d+(?:\.\d+)?)?(?:×| k| ms)|\d+ iterations",
                         told)
    assert len(figures) >= 10
    missing = [figure for figure in figures if figure not in flat(sample)]
    assert not missing, missing
