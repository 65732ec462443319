"""What each target measured: observations (one value per run), per-cell summaries with
their intervals, cache-bound cells, drift between iterations, disturbed runs, hosts."""
