"""the stored state of a tournament's SPRT

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 02:40:00

A tournament run with --sprt keeps its test's state (units counted, the pentanomial or trinomial
counts, the LLR, the decision, and the scores of stored matches not yet counted because their unit
is incomplete) in one row, written in the same transaction as the matches it has seen: a killed run
resumes the test from this row. Tournaments from before have none: their state is recomputed from
their matches, as `arena sprt` always does.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sprt_states",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("units", sa.Integer(), nullable=False),
        sa.Column("counts", sa.Text(), nullable=False),
        sa.Column("llr", sa.Float(), nullable=False),
        sa.Column("decision", sa.String(10), nullable=True),
        sa.Column("pending", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sprt_states")
