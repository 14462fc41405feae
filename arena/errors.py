"""The one exception type that means "the user asked for something that cannot be done"."""


class ArenaError(Exception):
    """Bad input or an impossible request: the CLI prints it as one line and exits with code 2."""
