"""Campaign file -> validated model -> the plan of runs (targets x workloads x iterations)."""
