"""Reporters: take result objects, return text (terminal tables, plans)."""
