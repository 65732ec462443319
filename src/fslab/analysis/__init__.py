"""Statistics over the metrics table: pure functions and group-by summaries."""
