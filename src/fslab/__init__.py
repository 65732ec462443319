"""fslab: a file-system performance lab.

Every command is callable as plain Python: `fslab.run(campaign)`, `fslab.analyze(dir)`,
`fslab.load(dir)`. They are loaded on first use, so `fslab --help` and the commands that
need little import little.
"""

from __future__ import annotations

from typing import Any

from fslab.core.version import __version__

__all__ = ["__version__", "analyze", "cleanup", "load", "run"]


def __getattr__(name: str) -> Any:
    """fslab.run, fslab.analyze, fslab.load and fslab.cleanup, from fslab.api."""
    if name in ("analyze", "cleanup", "load", "run"):
        from fslab import api

        return getattr(api, name)
    raise AttributeError(f"module 'fslab' has no attribute {name!r}")
