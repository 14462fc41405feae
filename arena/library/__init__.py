"""The library both skins use: the CLI (arena/cli.py) and the HTTP API (arena/server/) call these
functions and print or serve what they return, JSON-ready dicts and lists, so every shape and every
figure has one implementation. Neither skin imports `db`; these modules do.
"""
