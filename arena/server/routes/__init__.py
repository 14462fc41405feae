"""One module per resource; arena.server.app includes every module's `router` listed in ROUTERS."""
