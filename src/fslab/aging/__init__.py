"""The aging lab: an fs-drift-like engine, maintenance, and fragmentation probes."""
