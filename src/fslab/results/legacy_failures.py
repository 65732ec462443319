"""Results written before format 6 said why a run failed only in its reason, a sentence:
the one place that sentence is read back, into the kind later formats record (`failure`,
core/failures.py) and a refusing tool's own words (`tool_said`). Nothing else reads a
reason."""

from __future__ import annotations

import re

from fslab.core.failures import Failure
from fslab.core.record import RunRecord

# How those reasons began or what they held, as the runner of the time wrote them.
REFUSED_BY_TOOL = re.compile(r"provisioning .* failed: ((?:mount|mkfs\S*) exited with .*)",
                             re.S)  # the tool's own line in group 1
UNPROVISIONED = re.compile(r"provisioning .* failed: ", re.S)
NO_SPACE = re.compile(r"needs \S+ \S+ but .* has \S+ \S+ free$")
ENOSPC = ("No space left on device", "[Errno 28]", "error 28")  # fio's or Python's words
TIMEOUT = "the watchdog ended"
ERROR = re.compile(r"(error|\w*Error): ")


def legacy_failure(status: str, reason: str) -> tuple[Failure | None, str]:
    """(kind, the refusing tool's words) of a run recorded before kinds (None: it
    measured)."""
    if status == "ok":
        return None, ""
    if status == "unsupported":
        return Failure.UNSUPPORTED, ""
    if refused := REFUSED_BY_TOOL.match(reason):
        return Failure.REFUSED, refused.group(1)
    if UNPROVISIONED.match(reason):
        return Failure.PROVISION, ""
    if NO_SPACE.match(reason) or any(words in reason for words in ENOSPC):
        return Failure.NO_SPACE, ""
    if TIMEOUT in reason:
        return Failure.TIMEOUT, ""
    if ERROR.match(reason):
        return Failure.ERROR, ""
    return Failure.TOOL, ""


def with_failure(record: RunRecord) -> RunRecord:
    """An older record with its failure's kind (one that has a kind keeps it: a resumed
    older directory holds runs of both)."""
    if record.status != "ok" and not record.failure:
        kind, said = legacy_failure(record.status, record.reason)
        record.failure, record.tool_said = str(kind or ""), said
    return record
