"""Named agents: list, show, register, remove (`arena agents ...`)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from arena.library import catalog
from arena.server.deps import DatabaseDep, RegistryDep, Writer
from arena.server.reply import reply

router = APIRouter(prefix="/api/v1", tags=["agents"])


class AgentCreate(BaseModel):
    """`arena agents register NAME --type T --param K=V ... [--game G] [--checkpoint FILE]`."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    type: str = Field(min_length=1, max_length=100)
    params: dict[str, str | int | float | bool] = {}
    game: str | None = None
    checkpoint: str | None = Field(default=None, description="A file on the server's machine.")


@router.get("/agents", summary="Agent types and named agents (`arena agents list --json`)")
def list_agents(registry: RegistryDep, database: DatabaseDep) -> Response:
    return reply(catalog.agents(registry, database))


@router.get("/agents/{name}", summary="One named agent")
def show_agent(name: str, database: DatabaseDep) -> Response:
    return reply(catalog.named_agent(database, name))


@router.post("/agents", status_code=201, summary="Register a named agent (needs a token)")
def register_agent(body: AgentCreate, registry: RegistryDep, database: DatabaseDep, _holder: Writer) -> Response:
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in body.params.items()}
    return reply(catalog.register_agent(registry, database, body.name, body.type, params, body.game, body.checkpoint), 201)


@router.delete("/agents/{name}", summary="Remove a named agent; its past results stay (needs a token)")
def remove_agent(name: str, database: DatabaseDep, _holder: Writer) -> Response:
    catalog.remove_agent(database, name)
    return reply({"removed": name})
