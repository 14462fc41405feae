"""API tokens for `arena serve`: made once, stored as a digest, looked up by an indexed prefix."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import shlex
import threading
import time
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError
from arena.params import check_name
from db import tokens as store
from db.session import Database

KINDS = ("user", "bot")
PREFIX_LENGTH = 12  # "arena_" and six random characters: indexed, so a check reads one row
#: A token's last_used_at is written at most this often (seconds), so that a check stays a read, not a write per request.
TOUCH_EVERY = 60.0

_touched: dict[tuple[str, str], float] = {}  # (database URL, token digest) -> when this process last wrote last_used_at
_touched_lock = threading.Lock()


@dataclass(frozen=True)
class Holder:
    """Who a valid token belongs to."""

    name: str
    kind: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(database: Database, name: str, kind: str = "user") -> str:
    """A new token for `name`: returned once, only its digest is stored."""
    if kind not in KINDS:
        raise ArenaError(f"unknown token kind '{kind}' (choose: {', '.join(KINDS)})")
    check_name(name, "a token's name")  # the name is an agent's (pull:name=NAME, browser:name=NAME)
    token = "arena_" + secrets.token_urlsafe(32)
    if not store.add(database, name, kind, token[:PREFIX_LENGTH], _digest(token)):
        raise ArenaError(f"a token named '{name}' exists already (revoke it first)")
    return token


def check(database: Database, token: str, kind: str | None = None) -> Holder | None:
    """The holder of `token` (of `kind`, if given), or None when it is unknown, revoked or of another kind."""
    if not token.startswith("arena_") or len(token) < PREFIX_LENGTH + 8 or "\x00" in token:  # (no NUL reaches a database)
        return None
    digest = _digest(token)
    for token_id, name, token_kind, stored in store.by_prefix(database, token[:PREFIX_LENGTH]):
        if hmac.compare_digest(stored, digest):
            if kind is not None and token_kind != kind:
                return None
            _touch(database, token_id, digest)
            return Holder(name, token_kind)
    return None


def _touch(database: Database, token_id: int, digest: str) -> None:
    """Record that a token was used (`arena tokens list`'s last_used_at), at most once per TOUCH_EVERY seconds (keyed
    by its digest: a revoked token's id may be given to the next one made)."""
    key, now = (database.url, digest), time.monotonic()
    with _touched_lock:
        if now - _touched.get(key, -TOUCH_EVERY) < TOUCH_EVERY:
            return
        _touched[key] = now
    store.touch(database, token_id)


def listing(database: Database) -> list[dict[str, Any]]:
    """Every token's name, kind, prefix and dates (never the token)."""
    return store.listing(database)


def revoke(database: Database, name: str) -> None:
    if not store.remove(database, name):
        raise ArenaError(f"no token named '{name}'")


class NotOwner(ArenaError):
    """A write over HTTP to a row another token's holder made there, or one made with the CLI: the server answers 403."""


def check_owner(field: str, key: str, owner: str | None, by: str | None, action: tuple[str, str], command: str) -> None:
    """Let `by` act on a row `owner` made (each a user token's name; None: the CLI, on the server's machine, whose user
    is its administrator and may act on any row), or raise NotOwner about `field` ("tournament"), naming the row by
    `key`, its owner, and `command` (the CLI's, whose last word is the key): an HTTP request may act only on the rows
    its token's holder made over HTTP. `action`: how the row was made and what is refused, ("submitted", "cancel")."""
    if by is None or by == owner:
        return
    made, verb = action
    command = f"{command} {shlex.quote(key)}"
    if owner is None:
        raise NotOwner(f"{field}: '{key}' was made on the server's machine: {verb} it there with `{command}`", field)
    raise NotOwner(f"{field}: '{key}' was {made} by {owner}: only {owner} can {verb} it over HTTP "
                   f"(or `{command}` on the server's machine)", field)  # fmt: skip
