"""Opening the database, for the skins (they never import `db` themselves)."""

from db.changes import DataVersion
from db.queries import MAX_ID, check_writable, id_from_text, is_number
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

__all__ = ["HEAD_REVISION", "MAX_ID", "DataVersion", "Database", "StorageError", "check_writable", "database_exists",
           "database_status", "display_url", "id_from_text", "is_number", "open_database", "resolve_url"]  # fmt: skip
