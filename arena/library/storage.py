"""Opening the database, for the skins (they never import `db` themselves)."""

from db.session import Database, StorageError, open_database

__all__ = ["Database", "StorageError", "open_database"]
