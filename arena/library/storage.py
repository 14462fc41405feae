"""Opening the database, for the skins (they never import `db` themselves)."""

from db.changes import DataVersion
from db.session import HEAD_REVISION, Database, StorageError, database_status, open_database

__all__ = ["HEAD_REVISION", "DataVersion", "Database", "StorageError", "database_status", "open_database"]
