"""History: every campaign in one catalogue (DuckDB over the results' own tables), series
of like cells across campaigns, and the change points in them."""
