"""The ASGI application: `create_app(database, registry, settings)` builds one (tests make one per test)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from arena.library.storage import Database, DataVersion
from arena.plugins import Registry
from arena.remote.hub import HUB_ENV, Hub
from arena.server import errors
from arena.server.answers import Answers, FastAnswers
from arena.server.deps import read_access
from arena.server.play import Tables
from arena.server.request_log import RequestLines, RequestLog
from arena.server.routes import (
    agents,
    bots,
    forms,
    games,
    matches,
    pages,
    play,
    results,
    tournaments,
)
from arena.server.runner import QueueRunner
from arena.server.settings import Settings

log = logging.getLogger("arena.server")
HERE = Path(__file__).parent

#: Every router of the app, in order; the pages come last (their paths are the least specific).
#: Another capability adds its router here (one line).
ROUTERS: list[APIRouter] = [games.router, agents.router, tournaments.router, results.router, matches.router, bots.router,
                            play.api_router, play.router, forms.router, pages.router]  # fmt: skip
#: Routers that check their own credentials (the pull bots' WebSocket: its token comes in its hello; signing in).
OPEN_ROUTERS: list[APIRouter] = [bots.socket_router, play.signin_router]


def create_app(database: Database, registry: Registry, settings: Settings | None = None,
               routers: Sequence[APIRouter] | None = None) -> FastAPI:  # fmt: skip
    """The app over one database and plugin registry; with `settings.workers` > 0 it plays the queue while it runs."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        flusher = asyncio.create_task(lines.flush_every())
        # The pull bots' hub: the processes that play (spawned below, or a test's drain) find it in the environment.
        hub = app.state.bot_hub = Hub()
        before = os.environ.get(HUB_ENV)
        os.environ[HUB_ENV] = await hub.start()
        tables = app.state.tables = Tables(hub, database, registry, settings.play_idle_seconds, settings.play_time_per_move,
                                          settings.plugins_dirs, settings.worker_id, settings.lease_seconds, settings.reach)
        tables.start()
        runner = app.state.queue_runner = QueueRunner(database.url, settings) if settings.workers > 0 else None
        if runner is not None:
            runner.start(database)
        try:
            yield
        finally:
            if runner is not None:
                runner.stop_soon()  # first: a worker whose match the hub stops must not claim its tournament again
            hub.stop_soon()  # a match waiting on a bot now is Arena's to replay, not the bot's to lose
            if runner is not None:
                await asyncio.get_running_loop().run_in_executor(None, runner.close)
            await tables.close()
            await hub.close()
            app.state.answers.version.close()
            flusher.cancel()
            lines.flush()
            if before is None:
                os.environ.pop(HUB_ENV, None)
            else:
                os.environ[HUB_ENV] = before

    app = FastAPI(title="Arena", version="1", lifespan=lifespan, docs_url="/docs", redoc_url=None,
                  description="Tournaments between game-playing agents: submit, watch, and read leaderboards, "
                              "matrices, statistics and replays. The shapes are those of `arena ... --json`. "
                              "Writes need `Authorization: Bearer TOKEN` (`arena tokens create NAME`).")  # fmt: skip
    app.state.database, app.state.registry, app.state.settings = database, registry, settings
    app.state.bot_checks = set()  # the pull bots being checked now (POST /api/v1/bots/{name}/check)
    answers = app.state.answers = Answers(DataVersion(database))
    errors.install(app)
    for router in ROUTERS if routers is None else routers:
        app.include_router(router, dependencies=[Depends(read_access)])
    for router in OPEN_ROUTERS if routers is None else ():
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    if not settings.private:
        app.add_middleware(FastAnswers, answers=answers)
    app.add_middleware(errors.RefuseNul)  # before the fast answers and the routes: no NUL reaches a database
    app.add_middleware(errors.LimitBody)  # before anything reads a body, the token's check included
    lines = app.state.request_lines = RequestLines()
    app.add_middleware(RequestLog, lines=lines)  # the outermost: it logs the fast answers too
    return app
