"""People in a browser: signing in with a user token (`arena tokens create NAME`), and the form token.

Signing in stores the token in an HttpOnly, SameSite=Strict cookie (`arena_token`, which `deps.presented_token`
reads); no password exists. A state-changing request carried by that cookie must also bring the form
token: an HMAC of the cookie's token under a key of this server run, put in every form (`form_token`)
and sent by the page's script as the `X-Arena-Form` header. A page of another site can neither read it
nor, with SameSite=Strict, send the cookie at all. Requests with `Authorization: Bearer` need no form token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import HTTPException, Request
from starlette.responses import Response

from arena.library import tokens
from arena.server.deps import check_token, presented_token

COOKIE = "arena_token"
FORM_HEADER = "x-arena-form"


def form_key(request: Request) -> bytes:
    state = request.app.state
    if getattr(state, "form_key", None) is None:
        state.form_key = secrets.token_bytes(32)
    key: bytes = state.form_key
    return key


def form_token(request: Request, token: str) -> str:
    return hmac.new(form_key(request), token.encode(), hashlib.sha256).hexdigest()


def signed_in(request: Request) -> tokens.Holder | None:
    """The person of the request's user token (cookie or bearer), or None."""
    token = presented_token(request)
    if not token:
        return None
    return tokens.check(request.app.state.database, token, "user")


def person(request: Request) -> tokens.Holder:
    """The signed-in person, or 401."""
    holder = check_token(request.app.state.database, presented_token(request), "user")
    return holder


def check_form(request: Request, given: str | None) -> None:
    """403 unless the request is a bearer one or brings the form token of its cookie."""
    if request.headers.get("authorization") is not None:
        return
    cookie = request.cookies.get(COOKIE, "")
    given = given or request.headers.get(FORM_HEADER, "")
    if not cookie or not given or not hmac.compare_digest(given, form_token(request, cookie)):
        raise HTTPException(403, "form_token: missing or stale form token (reload the page and try again)")


def sign_in(response: Response, token: str) -> None:
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")


def sign_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")


def local_path(target: str | None, default: str = "/play") -> str:
    """Where to go after signing in: a path of this site only (never `//other.site` or a URL)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target
