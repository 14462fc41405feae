"""Opening the database, for the skins (they never import `db` themselves)."""

from db.changes import DataVersion
from db.session import (
    HEAD_REVISION,
    Database,
    StorageError,
    database_exists,
    database_status,
    display_url,
    open_database,
    resolve_url,
)

__all__ = ["HEAD_REVISION", "DataVersion", "Database", "StorageError", "database_exists", "database_status", "display_url",
           "open_database", "resolve_url"]  # fmt: skip
