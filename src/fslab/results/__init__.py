"""The results directory on disk: the store and the stats tables."""
