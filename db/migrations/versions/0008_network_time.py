"""each seat's network time (remote agents' round trips), stored apart from its think time

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 21:50:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("match_seats") as batch_op:
        batch_op.add_column(sa.Column("network_time", sa.Double(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("match_seats") as batch_op:
        batch_op.drop_column("network_time")
