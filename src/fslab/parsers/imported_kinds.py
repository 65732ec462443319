"""dd logs and bonnie++ CSV imported from elsewhere, as kinds of the parse stage: each
detected by its content, since an imported file's name says nothing (fio's imported kind
is in fio_kinds.py, beside fio's own). The records fslab's own workloads write are read
by the kinds their modules declare (core/plugins.py)."""

from __future__ import annotations

from fslab.parsers.bonnie import parse_bonnie
from fslab.parsers.dd import parse_dd
from fslab.parsers.fio_kinds import imported_name
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, read_text


def _imported_text(files: RawFiles) -> str:
    name = imported_name(files)
    return "" if name is None else read_text(files, name)


def _detect_imported_dd(files: RawFiles) -> bool:
    text = _imported_text(files)
    return " copied, " in text and bool(parse_dd(text))


def _detect_imported_bonnie(files: RawFiles) -> bool:
    text = _imported_text(files)
    return text.lstrip().startswith("1.9") or "\n1.9" in text


IMPORTED_DD = RawKind("imported_dd", "a dd log", _detect_imported_dd, lambda files: Parsed(
    "dd", parse_dd(_imported_text(files)), {"tool": "dd"}))
IMPORTED_BONNIE = RawKind("imported_bonnie", "bonnie++ CSV", _detect_imported_bonnie,
                          lambda files: Parsed("bonnie", parse_bonnie(_imported_text(files)),
                                               {"tool": "bonnie++"}))
