"""What a file's path says when it is imported: its file system, target, iteration,
workload, op and host, by a pattern the user gives or by sensible guesses.

- a pattern over its path relative to the import root, e.g.
  "{fs}/fio_results/{iteration}/{workload}-result.json" ({target}, {op} and {host} also
  work; "*" matches within a path component, "**" across components);
- without one: the first path component naming a known file system, the last number in
  the path as the iteration, fio's job name (or the file name) as the workload.
"""

from __future__ import annotations

import functools
import os
import re

from fslab.core.errors import UserError
from fslab.targets import known_kinds

# File systems a path may name besides fslab's own target kinds (known_kinds(): names
# only, no plug-in is imported), that studies use.
OTHER_FS = frozenset({"f2fs", "vfat", "jfs", "reiserfs", "nilfs2", "bcachefs", "ocfs2",
                      "nfs", "ceph", "cephfs", "lustre", "gpfs", "beegfs", "hfs"})


def known_fs() -> frozenset[str]:
    """Every file-system name a path may carry."""
    return frozenset(known_kinds()) | OTHER_FS


FIELDS = ("fs", "target", "iteration", "workload", "op", "host")


@functools.lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """'{fs}/x/{iteration}/{workload}-result.json' -> a regex with named groups."""
    parts = re.split(r"(\{[a-z]+\}|\*\*/?|\*)", pattern)
    regex = ""
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            if name not in FIELDS:
                raise UserError(f"bad pattern {pattern!r}: unknown field {{{name}}} "
                                f"(use {', '.join('{' + f + '}' for f in FIELDS)})")
            regex += rf"(?P<{name}>[^/]+?)"
        elif part.startswith("**"):
            regex += r"(?:.*/)?" if part.endswith("/") else r".*"
        elif part == "*":
            regex += r"[^/]*"
        else:
            regex += re.escape(part)
    return re.compile(f"^{regex}$")


def guess_fields(relative: str) -> dict[str, str]:
    """File system, iteration and workload guessed from a path (see module doc)."""
    directory, _, name = relative.rpartition("/")
    fields = dict(_guess_directory(directory))
    numbers = ITERATION.findall(name.lower()) or _directory_numbers(directory)
    if numbers:
        fields["iteration"] = numbers[-1]
    fields["workload"] = _guess_workload(name)
    return fields


# A number that reads as an iteration: "3", "iter_3", "run-3", "rep3" (the last one wins).
ITERATION = re.compile(r"(?:^|[^a-z0-9])(?:i|it|iter|iteration|run|rep)?[-_]?(\d+)(?=$|[^0-9])")


@functools.lru_cache(maxsize=4096)
def _guess_directory(directory: str) -> tuple[tuple[str, str], ...]:
    """The first directory naming a known file system gives fs and target."""
    names = known_fs()
    for part in directory.split("/") if directory else ():
        tokens = re.split(r"[-_.]", part.lower())
        known = [t for t in tokens if t in names]
        if part.lower() in names or known:
            fs = part.lower() if part.lower() in names else known[0]
            return (("fs", fs), ("target", part))
    return ()


@functools.lru_cache(maxsize=4096)
def _directory_numbers(directory: str) -> list[str]:
    return ITERATION.findall(directory.lower())


@functools.lru_cache(maxsize=4096)
def _guess_workload(name: str) -> str:
    stem = re.sub(r"(\.fio)?\.(json\+?|jsonplus|log|txt|csv|out)$", "", name)
    stem = re.sub(r"[-_.]?(result|results|output|out)$", "", stem) or stem
    # "dd-3", "seqread_run2": the number is the iteration, not part of the workload.
    return re.sub(r"[-_.]?(?:i|it|iter|iteration|run|rep)?[-_]?\d+$", "", stem) or stem


def relative_path(root: str, file: str) -> str:
    """`file` relative to its import root, with "/" separators (patterns use them)."""
    prefix = root.rstrip(os.sep) + os.sep
    relative = file[len(prefix):] if file.startswith(prefix) else os.path.relpath(file, root)
    return relative.replace(os.sep, "/")


def path_fields(relative: str, pattern: str | None) -> dict[str, str] | None:
    """Fields of a path by the pattern (None when it does not match), or guessed."""
    if not pattern:
        return guess_fields(relative)
    match = compile_pattern(pattern).match(relative)
    return {k: v for k, v in match.groupdict().items() if v is not None} if match else None


def mismatch(pattern: str | None) -> str:
    return f"path does not match the pattern {pattern!r}"


@functools.lru_cache(maxsize=4096)
def iteration_of(text: str) -> int:
    """The iteration a path field names: its last number (1 when it has none)."""
    digits = re.findall(r"\d+", text)
    return int(digits[-1]) if digits else 1
