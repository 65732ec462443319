"""Reading a TOML file a user wrote: every failure is one line naming the file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from fslab.core.errors import UserError


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The parsed file, or a UserError like 'cannot read campaign x.toml: No such file'."""
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: malformed TOML: {exc}") from exc
