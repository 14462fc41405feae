"""`arena serve`: the HTTP API (/api/v1), the web pages and the tournament queue, over the library in arena.library."""

from arena.server.app import create_app
from arena.server.settings import Settings

__all__ = ["Settings", "create_app"]
