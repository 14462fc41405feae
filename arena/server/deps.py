"""What routes depend on, as `Annotated` aliases: a route reads as its signature.

`require_token(kind)` makes a dependency that accepts only a valid bearer token of that kind
(`user` for writes; `bot` for pull bots, see arena/remote); it answers 401 with a JSON error. It reads
the `Authorization` header only: the sign-in cookie of a browser is for reads and the play pages
(arena.server.people), whose posts also need the form token, so a cookie alone writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from arena.library import tokens
from arena.library.storage import Database
from arena.plugins import Registry
from arena.server.settings import Settings

BEARER = "bearer "


async def get_database(request: Request) -> Database:
    return request.app.state.database


async def get_registry(request: Request) -> Registry:
    return request.app.state.registry


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


#: Seconds between checks of the token of a connection that stays open (a bot's WebSocket, an event stream on a private
#: server): a token revoked meanwhile ends it within this long; a new request is refused at once.
TOKEN_RECHECK_SECONDS = 5.0

DatabaseDep = Annotated[Database, Depends(get_database)]
RegistryDep = Annotated[Registry, Depends(get_registry)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def bearer_token(request: Request) -> str | None:
    """The token of `Authorization: Bearer ...` ("" for another scheme), or None without the header."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    return header[len(BEARER):].strip() if header.lower().startswith(BEARER) else ""


def presented_token(request: Request) -> str | None:
    """The bearer token, or (for pages in a browser) the `arena_token` cookie."""
    token = bearer_token(request)
    return token if token is not None else request.cookies.get("arena_token")


def check_token(database: Database, token: str | None, kind: str | None) -> tokens.Holder:
    """The token's holder, or 401 (missing, unknown, revoked, or of another kind)."""
    challenge = {"WWW-Authenticate": "Bearer"}
    if token is None:
        raise HTTPException(401, "a token is needed: send 'Authorization: Bearer TOKEN' (see `arena tokens create`)", challenge)
    holder = tokens.check(database, token, kind)
    if holder is None:
        raise HTTPException(401, "bad token: unknown, revoked" + (f", or not a {kind} token" if kind else ""), challenge)
    return holder


def require_token(kind: str | None = "user") -> Callable[[Request], tokens.Holder]:
    """A dependency that lets through only requests with a valid bearer token of `kind` (None: any kind)."""

    def dependency(request: Request) -> tokens.Holder:
        return check_token(request.app.state.database, bearer_token(request), kind)

    return dependency


async def read_access(request: Request) -> None:
    """Reads are public unless the server is private; then any valid token may read (checked in the threadpool:
    the public case costs no thread hop)."""
    if request.app.state.settings.private:
        await run_in_threadpool(check_token, request.app.state.database, presented_token(request), None)


Writer = Annotated[tokens.Holder, Depends(require_token("user"))]
Bot = Annotated[tokens.Holder, Depends(require_token("bot"))]
