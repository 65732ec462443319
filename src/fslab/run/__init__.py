"""Executes a plan: campaign steps, runner, interleaved rounds, the ceiling, adaptive stages."""
