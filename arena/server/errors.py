"""Every error leaves as JSON `{"error": message, "field": name-or-null}` with a 4xx status; never a traceback."""

from __future__ import annotations

import json
import logging
import re
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from arena.errors import ArenaError, shown
from arena.library.storage import StorageError
from arena.library.tokens import NotOwner

log = logging.getLogger("arena.server")

#: Fields of the API's bodies and queries, looked for in a library message to say which one is wrong.
FIELDS = ("openings", "budget", "players", "rounds", "seed", "max_turns", "time_per_move", "challenger", "format", "name", "game", "agents",
          "tournament", "system", "kind", "agent", "limit", "offset", "type", "params", "checkpoint")  # fmt: skip


def guess_field(message: str) -> str | None:
    """The field a library message is about: `--max-turns ...` -> max_turns, `unknown game 'x'` -> game."""
    needs = re.search(r"needs --([a-z-]+)", message)
    option = needs or re.search(r"--([a-z-]+)", message)
    if option and option.group(1).replace("-", "_") in FIELDS:
        return option.group(1).replace("-", "_")
    if re.search(r"\b(agent|agents)\b", message) and not re.search(r"\bplayers\b", message):
        return "agents"
    for name in FIELDS:
        if re.search(rf"\b{name.replace('_', '[ _-]')}\b", message):
            return name
    return None


def in_field_names(message: str) -> str:
    """A library message in the API's words: a CLI option that is a field of the request (`--max-turns`) becomes the
    field (`max_turns`); options with no field (`--resume`) stay as they are."""
    def field(option: re.Match[str]) -> str:
        name = option.group(1).replace("-", "_")
        return name if name in FIELDS else option.group(0)

    return re.sub(r"--([a-z][a-z-]*)", field, message)


def naming(field: str | None, message: str) -> str:
    """`message`, headed by `field` when it does not name the field itself (`agents: missing name before ':'...`)."""
    if field is None or re.search(rf"\b{field.rstrip('s').replace('_', '[ _-]')}", message):
        return message
    return f"{field}: {message}"


class _Huge:
    """A number literal longer than int() reads, where it stood in a body."""


def unreadable_body(body: bytes, cause: ValueError | RecursionError) -> tuple[str, str]:
    """(field, message) for a JSON body the parser refused with a ValueError that is no syntax error: the top-level field
    whose value holds a number of more than 4,300 digits (int()'s limit), else the body as a whole (e.g. not UTF-8)."""
    def number(text: str) -> int | _Huge:
        try:
            return int(text)
        except ValueError:
            return _HUGE

    def holds(value: Any) -> bool:  # without recursion: a body may nest thousands deep
        todo = [value]
        while todo:
            item = todo.pop()
            if item is _HUGE:
                return True
            if isinstance(item, dict | list):
                todo.extend(item.values() if isinstance(item, dict) else item)
        return False

    try:
        parsed = json.loads(body, parse_int=number)
    except (ValueError, RecursionError):
        parsed = None
    for key, value in parsed.items() if isinstance(parsed, dict) else ():
        if holds(value):
            return str(key), f"{key}: a number of more than 4,300 digits (no field takes one)"
    reason = ("not UTF-8 text" if isinstance(cause, UnicodeDecodeError) else "nested too deeply"
              if isinstance(cause, RecursionError) else str(cause).split(":")[0])  # fmt: skip
    return "body", f"body: cannot be read as JSON ({reason})"


_HUGE = _Huge()


def is_page(request: Request) -> bool:
    """A request for a page (a person reads the answer), not for the JSON API."""
    path = request.url.path
    return not (path == "/api" or path.startswith("/api/")) and path != "/openapi.json"


def error(request: Request, status: int, message: str, field: str | None = None,
          headers: dict[str, str] | None = None) -> Response:  # fmt: skip
    """JSON for the API; a page for the pages (a person reads those)."""
    if is_page(request):
        from arena.server.routes.pages import render

        return render(request, "error.html", status, status=status, message=message)
    return JSONResponse({"error": message, "field": field}, status_code=status, headers=headers)


def nul_in_address(scope: Any) -> str | None:
    """Where a request's address holds a NUL character (%00): "path", or the query parameter's name; else None."""
    if "\x00" in scope["path"]:
        return "path"
    query = scope.get("query_string", b"")
    if b"%00" in query or b"\x00" in query:
        for name, value in parse_qsl(query.decode("utf-8", "replace"), keep_blank_values=True):
            if "\x00" in name + value:
                return name.replace("\x00", "%00")
    return None


class RefuseNul:
    """A request whose address holds a NUL character gets a 400 that says where (the bodies' models refuse one in their
    fields: arena.server.bodies): no id, name or value may hold one, PostgreSQL's text cannot, and both databases must
    answer alike."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        where = nul_in_address(scope) if scope["type"] == "http" else None
        if where is None:
            await self.app(scope, receive, send)
            return
        from arena.server.bodies import NUL

        response = error(Request(scope), 400, f"{where}: {NUL}", where)
        await response(scope, receive, send)


#: The largest request body the server reads (a tournament's openings listed in full are its largest bodies).
MAX_BODY_BYTES = 16 * 1024 * 1024


class LimitBody:
    """A request body over MAX_BODY_BYTES gets a 413 naming `body`, before anything reads it: FastAPI reads and parses a
    body before the route's dependencies check the token, so one anonymous 300 MB POST held about 1 GB. A body sent
    without a Content-Length (chunked) is read here up to the limit, then handed on."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        if length is None and b"transfer-encoding" not in headers:  # no body at all
            await self.app(scope, receive, send)
            return
        if length is not None:
            if not length.isdigit() or int(length) > MAX_BODY_BYTES:
                await self._refuse(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        messages, size = [], 0
        while True:  # no Content-Length: read the body here, as far as the limit
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if size > MAX_BODY_BYTES:
                await self._refuse(scope, receive, send)
                return
            if message["type"] != "http.request" or not message.get("more_body", False):
                break

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(scope: Any, receive: Any, send: Any) -> None:
        message = f"body: at most {MAX_BODY_BYTES // (1024 * 1024)} MiB (a request's body is JSON or a form, never a file)"
        await error(Request(scope), 413, message, "body")(scope, receive, send)


def arena_status(message: str) -> int:
    return 404 if message.startswith("no ") else 400


def refusal(exc: ArenaError) -> tuple[int, str, str | None]:
    """(status, message, field) of a library refusal, in the API's words: 403 for another's row, 404 for "no ...", else
    400; the field the error names, or the one its message is about, which the message then leads with."""
    message = str(exc)
    status = 403 if isinstance(exc, NotOwner) else arena_status(message)
    missing = re.match(r"no (\w+)", message)  # "no tournament with id or name 'x'" is about the tournament
    field = exc.field or (missing.group(1) if missing and missing.group(1) in FIELDS else guess_field(message))
    return status, naming(field, in_field_names(message)), field


def install(app: FastAPI) -> None:
    @app.exception_handler(ArenaError)
    async def arena_error(request: Request, exc: ArenaError) -> Response:
        return error(request, *refusal(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems: list[Any] = list(exc.errors())
        first = problems[0] if problems else {}
        location = [str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path", "header")]
        text = first.get("msg", "invalid request").removeprefix("Value error, ")  # a validator's own words, as they are
        if first.get("type") == "json_invalid":  # its location is a character offset, not a field
            location = ["body"]
        elif not location and tuple(first.get("loc", ())) == ("body",):  # the body as a whole: none, or not an object
            location, given = ["body"], first.get("input")
            sent = request.headers.get("content-type", "")
            text = ("missing (or null): send a JSON object (Content-Type: application/json)" if given is None
                    else f"sent {'as ' + shown(sent, 40) if sent else 'without a Content-Type'}: send a JSON object with "
                    "Content-Type: application/json" if isinstance(given, bytes | str) and "json" not in sent.lower()
                    else f"a JSON object is needed, not {shown(json.dumps(given, default=repr), 40)}")  # fmt: skip
        field = location[0] if location else None
        message = f"{'.'.join(location)}: {text}" if location else text
        details = [{"field": ".".join(str(p) for p in e.get("loc", ())[1:]), "message": e.get("msg", "").removeprefix("Value error, ")}
                   for e in problems]  # fmt: skip
        if is_page(request):
            return error(request, 422, message, field)  # a page asked for with a bad address: a page that says so
        return JSONResponse({"error": message, "field": field, "details": details}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400 and isinstance(exc.__cause__, ValueError | RecursionError):  # FastAPI could not parse the body
            field, message = unreadable_body(await request.body(), exc.__cause__)
            return error(request, 422, message, field)
        return error(request, exc.status_code, str(exc.detail), None, getattr(exc, "headers", None))

    @app.exception_handler(StorageError)
    async def storage_error(request: Request, exc: StorageError) -> Response:
        return error(request, 503, str(exc))

    @app.exception_handler(SQLAlchemyError)
    async def database_error(request: Request, exc: SQLAlchemyError) -> Response:
        orig = getattr(exc, "orig", None)
        return error(request, 503, f"database: {str(orig if orig is not None else exc).splitlines()[0]}")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error")
        return error(request, 500, f"internal error: {type(exc).__name__}")
