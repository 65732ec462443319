"""Tuning: which options for this workload, without measuring every configuration, and
never crowning a lucky run. Three stages, each a campaign fslab already knows how to run
and analyse: screen (a reduced factorial design), race (the survivors in interleaved
rounds, dropped with the error rate held across candidates and looks), confirm (the
winner against the reference on fresh data)."""
