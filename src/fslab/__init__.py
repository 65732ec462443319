"""fslab: a file-system performance lab.

Every command is callable as plain Python: `fslab.run(campaign)`, `fslab.analyze(dir)`,
`fslab.load(dir)`.
"""

__version__ = "0.1.0"

from fslab.api import analyze, cleanup, load, run

__all__ = ["__version__", "analyze", "cleanup", "load", "run"]
