"""Sittings and machines: answers that hold next time (pooling, repeat intervals)."""
