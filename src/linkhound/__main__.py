"""`python -m linkhound` runs the command line."""

from linkhound.cli import entry

entry()
