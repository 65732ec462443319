"""Plug-ins: modules that add to fslab by what they declare, each registered by one line.

A plug-in module declares any of these names at its top level:

- `SUITE`: a `fslab.workloads.suites.Suite` — a workload (`[[workload]] preset = NAME`,
  listed by `fslab presets`), built by the suite's `build` like fslab's own;
- `KIND`: a `fslab.parsers.raw_files.RawKind` — how the parse stage recognises and reads
  the raw files the workload wrote (its file names declared in the same module);
- `PACKAGES`: `{tool: Debian package}` — what the one-line "tool not found" message and
  `fslab doctor` name for the workload's own tool;
- `STATISTIC`: a `fslab.analysis.statistic.Statistic` — a table computed from every
  campaign's runs, written to stats/ beside fslab's own, its method statement in
  methods.csv, shown by the report.

The one line: the module's name in `BUILTIN` (core/lookups.py: fslab's own workloads
with a suite of their own and its statistics) or in the environment variable
FSLAB_PLUGINS (comma-separated module names importable from PYTHONPATH: a user's own
module outside the package). fslab's own come first, so a user's suite cannot take one
of their names. The registry is read where a declaration is used, so `core` names modules
and imports none of the stages above it.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType
from typing import Any

from fslab.core.errors import UserError
from fslab.core.lookups import BUILTIN

ENV = "FSLAB_PLUGINS"
DECLARATIONS = ("SUITE", "KIND", "PACKAGES", "STATISTIC")


def names() -> tuple[str, ...]:
    """Every registered module name: fslab's own, then $FSLAB_PLUGINS's in order."""
    extra = [n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()]
    return tuple(dict.fromkeys([*BUILTIN, *extra]))


@functools.cache
def _modules(registered: tuple[str, ...]) -> tuple[ModuleType, ...]:
    loaded = []
    for name in registered:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            if name in BUILTIN:
                raise  # one of fslab's own: a bug to see whole, not a user's one line
            raise UserError(f"plug-in {name!r} ({ENV}) cannot be imported: {exc}") from None
        if not any(hasattr(module, d) for d in DECLARATIONS):
            raise UserError(f"plug-in {name!r} declares none of {', '.join(DECLARATIONS)}")
        loaded.append(module)
    return tuple(loaded)


def modules() -> tuple[ModuleType, ...]:
    """The registered modules, imported once per registry."""
    return _modules(names())


def declared(name: str, of: type | None = None) -> list[Any]:
    """Each registered module's declaration of `name` (SUITE, KIND, ...), in order; with
    `of`, each must be one of those (a wrong one is a line naming the module)."""
    if name not in DECLARATIONS:
        raise ValueError(f"not a plug-in declaration: {name}")
    found = [(module, getattr(module, name)) for module in modules() if hasattr(module, name)]
    for module, value in found:
        if of is not None and not isinstance(value, of):
            raise UserError(f"plug-in {module.__name__!r}: its {name} is a "
                            f"{type(value).__name__}, not {of.__module__}.{of.__qualname__}")
    return [value for _, value in found]
