"""The one exception type that means "the user asked for something that cannot be done"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class ArenaError(Exception):
    """Bad input or an impossible request: the CLI prints it as one line and exits with code 2.

    `field`: the input it is about, where the code that raised it knows (the server names it in its 4xx answer)."""

    def __init__(self, message: str = "", field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@contextmanager
def about(field: str) -> Iterator[None]:
    """ArenaErrors raised inside, and not yet about a field, are about `field` (a request's `game`, `agents`...)."""
    try:
        yield
    except ArenaError as exc:
        if exc.field is None:
            exc.field = field
        raise


@contextmanager
def plugin_code(what: str) -> Iterator[None]:
    """A plugin's code run where only ArenaError is expected (a game's constructor, an agent's check_game): any other
    exception is the plugin's fault, told in one line naming `what`, never a traceback or an HTTP 500."""
    try:
        yield
    except ArenaError:
        raise
    except Exception as exc:  # noqa: BLE001  (whatever a plugin raises)
        said = f": {exc}" if str(exc) else ""
        raise ArenaError(f"{what} raised {type(exc).__name__}{said}") from exc


def first_line(exc: BaseException) -> str:
    """An exception's message as one line: its first ("" for none)."""
    text = str(exc)
    return text.splitlines()[0] if text else ""


def shown(text: str, limit: int = 60) -> str:
    """A user's text as a message quotes it: whole up to `limit` characters, else its start and '...' (a message does not
    repeat a 5,000-digit number)."""
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` when one of `choices` is close to `word` (a typo: difflib's similarity), else nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.7)
    return f"; did you mean '{close[0]}'?" if close else ""
