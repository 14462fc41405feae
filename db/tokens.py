"""API tokens: rows keep a digest and an indexed prefix; the token itself is never stored."""

from __future__ import annotations

from sqlalchemy import delete, select, update

from db.models import Token, utcnow
from db.session import Database, retrying


def add(database: Database, name: str, kind: str, prefix: str, digest: str) -> bool:
    """Store a token; False when the name is taken."""

    def write() -> bool:
        with database.session() as session, session.begin():
            if session.scalar(select(Token.id).where(Token.name == name)) is not None:
                return False
            session.add(Token(name=name, kind=kind, prefix=prefix, digest=digest))
            return True

    return retrying(write)


def by_prefix(database: Database, prefix: str) -> list[tuple[int, str, str, str]]:
    """(id, name, kind, digest) of the tokens with this prefix."""
    with database.engine.connect() as connection:
        rows = connection.execute(select(Token.id, Token.name, Token.kind, Token.digest).where(Token.prefix == prefix))
        return [tuple(row) for row in rows]  # type: ignore[misc]


def listing(database: Database) -> list[dict[str, object]]:
    with database.session() as session:
        return [
            {"name": t.name, "kind": t.kind, "prefix": t.prefix,
             "created_at": t.created_at.isoformat(timespec="seconds"),
             "last_used_at": t.last_used_at.isoformat(timespec="seconds") if t.last_used_at else None}
            for t in session.scalars(select(Token).order_by(Token.name))
        ]  # fmt: skip


def touch(database: Database, token_id: int) -> None:
    """Set the token's last_used_at to now."""

    def write() -> None:
        with database.engine.begin() as connection:
            connection.execute(update(Token).where(Token.id == token_id).values(last_used_at=utcnow()))

    retrying(write)


def remove(database: Database, name: str) -> bool:
    def write() -> bool:
        with database.engine.begin() as connection:
            return connection.execute(delete(Token).where(Token.name == name)).rowcount > 0

    return retrying(write)
