"""`python -m linkhound` runs the command line."""

from linkhound.cli import main

raise SystemExit(main())
