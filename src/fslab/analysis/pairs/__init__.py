"""Which target is faster, by how much and how sure: the one log-scale model of pairs,
the questions it answers, power, the one decision rule, looks, rankings."""
