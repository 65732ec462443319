"""Probes of a file system's layout: per-file extents (FIEMAP), free-space fragmentation
and the used-space summary built on them; used by aging, targets and workloads alike."""
