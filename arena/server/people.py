"""People in a browser: signing in with a user token (`arena tokens create NAME`), and the form token.

Signing in stores the token in an HttpOnly, SameSite=Strict cookie (`arena_token`, which `deps.presented_token`
reads); no password exists. A state-changing request carried by that cookie must also bring the form
token: an HMAC of the cookie's token under a key of this server run, put in every form (`form_token`)
and sent by the page's script as the `X-Arena-Form` header. A page of another site can neither read it
nor, with SameSite=Strict, send the cookie at all. Requests with `Authorization: Bearer` need no form token.
Signing in itself has no cookie to tie a form token to, so it refuses a form posted by a page of another
origin instead (login CSRF: that page would sign the browser in as someone else, whose name the person's
games would then count for).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from urllib.parse import urlsplit

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

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


async def page_for_person(request: Request, here: str, page: Callable[[Request, tokens.Holder], Response]) -> Response:
    """`page(request, person)` for the signed-in person, or a redirect to sign in (and back to `here`)."""
    holder = await run_in_threadpool(signed_in, request)
    if holder is None:
        return RedirectResponse(f"/signin?next={here}", 303)
    return await run_in_threadpool(page, request, holder)


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


def check_same_origin(request: Request) -> None:
    """403 for a form posted by a page of another origin. Browsers say where a request comes from in `Sec-Fetch-Site`
    (kept as sent by a reverse proxy that rewrites `Host`): only `same-origin` (or `none`: typed, not posted by a page)
    passes. Older browsers send only `Origin` with a form POST (`null` from an opaque origin), compared with `Host`;
    a request with neither (curl, a script) is no browser's, so no other page could have sent it."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if site is not None:
        cross = site not in ("same-origin", "none")
    elif origin is not None:
        cross = origin == "null" or urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower()
    else:
        return
    if cross:
        raise HTTPException(403, f"origin: a form of another site ({origin or site}) cannot sign in here; "
                                 "use this server's /signin page")  # fmt: skip


def sign_in(response: Response, token: str) -> None:
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")


def sign_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")


def local_path(target: str | None, default: str = "/play") -> str:
    """Where to go after signing in: a path of this site only (never `//other.site` or a URL)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target
