"""arena serve: the tournament queue's claims and API tokens

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 21:40:00

A tournament submitted over HTTP is a row with status `queued`; a server claims it by writing its
worker id in `claimed_by` and a lease end in `lease_until`, renewed while it plays. A server that
dies stops renewing, so another (or the same one restarted) takes the tournament over and resumes
it. `error` says why a tournament `failed`. `tokens` keeps a digest of each API token and an
indexed prefix to find it; the token itself is shown once and never stored.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch_op:
        batch_op.add_column(sa.Column("claimed_by", sa.String(200), nullable=True))
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("error", sa.Text(), nullable=True))
        batch_op.create_index("ix_tournaments_status", ["status"])
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("kind", sa.String(10), nullable=False, server_default="user"),
        sa.Column("prefix", sa.String(20), nullable=False),
        sa.Column("digest", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
    )
    op.create_index("ix_tokens_prefix", "tokens", ["prefix"])


def downgrade() -> None:
    op.drop_index("ix_tokens_prefix", "tokens")
    op.drop_table("tokens")
    with op.batch_alter_table("tournaments") as batch_op:
        batch_op.drop_index("ix_tournaments_status")
        batch_op.drop_column("error")
        batch_op.drop_column("lease_until")
        batch_op.drop_column("claimed_by")
