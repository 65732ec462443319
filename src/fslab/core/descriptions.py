"""How fslab measures, in the words `fslab run --help` and docs/user-guide.md both print:
one text each, so the help, the guide and the code cannot tell three stories
(tests/cli/test_docs.py checks that the guide holds them word for word and that every
number in them is the code's own constant)."""

from __future__ import annotations

SLICES = (
    "Slices: each fio job is laid out once per fresh file system, then measured in short "
    "slices of the same job on every target in turn, the order shuffled afresh every "
    "round, so that a slow moment of the disk falls on every target alike. A run is 6 "
    "slices (--rounds; campaign key rounds), fewer where a slice would measure less than "
    "0.5 s or a fio start carry less than 1 s of ramp and runtime: the default 2 s job "
    "with its 1 s ramp runs in 3. The first slice ramps (its share of the job's "
    "ramp_time, at least 0.5 s and at most all of it), the later ones do not. A run's value is the "
    "mean of its slices; the iteration, a fresh file system, stays the unit of "
    "replication. A job that cannot be cut into slices (it fills the disk, deletes its "
    "files, verifies, replays a log, or ends on bytes rather than time) is measured whole, "
    "and the dry run says why."
)

CEILING = (
    "Ceiling: what the disk under the loop images delivers for each preset job, measured "
    "with O_DIRECT on a raw loop device over an image in the lab directory, so on the same "
    "disk. A job measured in slices has it measured as one more participant in every round "
    "of the first 2 iterations; a job measured whole, by 2 runs before the campaign (the "
    "larger kept, reused from the lab's ceilings.json for 24 h). A cell whose IOPS or "
    "bandwidth is above 1.25x its ceiling is marked cache-bound and never ranked. "
    "--no-ceiling (campaign key ceiling = false) skips it."
)
