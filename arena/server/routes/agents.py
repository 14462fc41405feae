"""Named agents: list, show, register, remove (`arena agents ...`)."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from pydantic import Field
from starlette.responses import Response

from arena.errors import ArenaError
from arena.library import catalog
from arena.server.bodies import Body
from arena.server.deps import DatabaseDep, RegistryDep, SettingsDep, Writer
from arena.server.errors import error, guess_field, naming
from arena.server.reply import reply

router = APIRouter(prefix="/api/v1", tags=["agents"])


class AgentCreate(Body):
    """`arena agents register NAME --type T --param K=V ... [--game G] [--checkpoint FILE]`."""

    name: str = Field(min_length=1, max_length=200)
    type: str = Field(min_length=1, max_length=100)
    params: dict[str, str | int | float | bool] = {}
    game: str | None = None
    checkpoint: str | None = Field(default=None, min_length=1, description="A file on the server's machine.")


@router.get("/agents", summary="Agent types and named agents (`arena agents list --json`)")
def list_agents(registry: RegistryDep, database: DatabaseDep) -> Response:
    return reply(catalog.agents(registry, database))


@router.get("/agents/{name}", summary="One named agent")
def show_agent(name: str, database: DatabaseDep) -> Response:
    return reply(catalog.named_agent(database, name))


def body_field(message: str) -> str | None:
    """The field of AgentCreate a library message is about (its words are the CLI's: `agents register`)."""
    for field, pattern in (("checkpoint", r"checkpoint"), ("params", r"\bparameter\b"), ("type", r"unknown agent type"),
                           ("name", r"agent name|choose another name|exists already")):  # fmt: skip
        if re.search(pattern, message):
            return field
    guessed = guess_field(message)
    if re.search(r"weights|\beval\b|\bmodel\b", message) and guessed in ("agents", "agent", None):  # a parameter's value
        return "params"
    return "type" if guessed in ("agents", "agent") else guessed  # about the agent the body describes


@router.post("/agents", status_code=201, summary="Register a named agent (needs a token)")
def register_agent(body: AgentCreate, request: Request, registry: RegistryDep, database: DatabaseDep,
                   settings: SettingsDep, holder: Writer) -> Response:  # fmt: skip
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in body.params.items()}
    try:
        created = catalog.register_agent(registry, database, body.name, body.type, params, body.game, body.checkpoint,
                                         holder.name, settings.reach)
    except ArenaError as exc:
        message = str(exc)
        field = exc.field or body_field(message)
        return error(request, 404 if message.startswith("no ") else 400, naming(field, message), field)
    return reply(created, 201)


@router.delete("/agents/{name}",
               summary="Remove a named agent; its past results stay (needs the token that registered it: another gets 403)")
def remove_agent(name: str, database: DatabaseDep, holder: Writer) -> Response:
    catalog.remove_agent(database, name, holder.name)
    return reply({"removed": name})
