"""Docs that cannot drift (issue 61): every `fslab …` command line in README.md and
docs/*.md names a subcommand and flags that `--help` lists; every examples/*.toml passes
`--dry-run`; docs/user-guide.md describes the slices and the ceiling in the words `fslab
run --help` prints (core/descriptions.py)."""

import functools
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fslab.core.descriptions import CEILING, SLICES
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
