"""`python -m fslab.cli`: the fslab command."""

from fslab.cli.main import main

main()
