"""Parsers: raw tool output -> Measurements (no I/O beyond reading what they are given)."""
