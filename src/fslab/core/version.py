"""fslab's version (pyproject.toml's), where every stage can read it."""

__version__ = "0.1.0"
