"""a per-tournament secret mixed into the seeds of a hidden-information game's chance

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 22:30:00

Agents' seeds derive from the public tournament seed and the match index, and so did the game's
deal: an agent could compute the whole deal by brute force over the index. The game's chance now
also depends on this secret, stored here and never shown. Tournaments from before have none and
play (and resume) exactly as before.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch_op:
        batch_op.add_column(sa.Column("secret", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch_op:
        batch_op.drop_column("secret")
