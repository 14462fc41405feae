"""Alembic environment: runs on the connection db.session.upgrade hands over."""

from alembic import context

from db.models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through db.session.upgrade (or `arena db upgrade`)")

context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
