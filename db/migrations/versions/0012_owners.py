"""who submitted a tournament, who registered a named agent

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 09:10:00

`arena serve` lets the holder of a user token cancel a tournament or remove a named agent only if that
token's holder submitted it over HTTP: the row keeps the token's name. Rows made with the CLI (on the
server's machine, by its administrator), and every row from before, have none: over HTTP nobody may
cancel or remove them; the CLI still can.
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

TABLES = ("tournaments", "agents")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(sa.Column("owner", sa.String(200), nullable=True))


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+), not a copy of the table: dropping the old tournaments table would
    # delete its matches (ON DELETE CASCADE, with SQLite's foreign keys on).
    for table in TABLES:
        with op.batch_alter_table(table, recreate="never") as batch_op:
            batch_op.drop_column("owner")
