"""One protocol for the reporters: a function from one typed result to what is shown.

Reporters differ in medium (a self-contained HTML page; a rich renderable for the
terminal) and in the result they show, never in how they are called or what they may
do: each takes one typed result and returns what is shown, and none reads files or
analyses (the stages before them did; api.py hands them the result):

    result (where it is built)                        reporters
    ReportData: stats/ of a results dir (api.report)  html.build_report
    Comparison: two dirs (api.compare)                compare_html.build_compare_report,
                                                      terminal.compare_report

The CSV and JSON under stats/ are the analyze stage's output (analysis/pipeline.py), not
a reporter. `PAGES` and `TERMINAL` name every reporter, so mypy checks each against the
protocol: a reporter that grew a second argument or a side input fails `make test`.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from rich.console import RenderableType

from fslab.report.compare_html import build_compare_report
from fslab.report.html import build_report
from fslab.report.terminal import compare_report

Result = TypeVar("Result", contravariant=True)
Shown = TypeVar("Shown", covariant=True)


class Reporter(Protocol[Result, Shown]):
    """Renders one typed result."""

    def __call__(self, result: Result, /) -> Shown: ...


PAGES: tuple[Reporter[Any, str], ...] = (
    build_report, build_compare_report)
TERMINAL: tuple[Reporter[Any, RenderableType], ...] = (compare_report,)
