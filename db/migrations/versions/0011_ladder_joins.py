"""agents waiting to join a ladder

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 05:20:00

A ladder (a tournament of format `ladder`) takes agents while it runs. A join is a row here, in join
order (its id); the queue worker playing the ladder admits the waiting rows into the tournament's
settings at its next batch boundary, in the same write as the schedule that seats them, so the
stored join order and the stored results decide every choice. (tournament_id, label) is unique:
the same agent cannot wait twice.
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ladder_joins",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=False),
        sa.Column("label", sa.String(300), nullable=False),
        sa.Column("entry", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("tournament_id", "label", name="uq_ladder_join"),
    )


def downgrade() -> None:
    op.drop_table("ladder_joins")
