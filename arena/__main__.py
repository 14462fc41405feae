"""`python -m arena ...`: the `arena` command, for an environment whose scripts folder is not on PATH."""

from arena.cli import main

main()
