"""how many of a match's first plies were its opening (played by no agent)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 21:40:00

`arena run-tournament --openings` starts matches from openings; their plies head the stored move
list (so a replay starts from the initial state) and this column says how many they are.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch_op:
        batch_op.add_column(sa.Column("opening_plies", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch_op:
        batch_op.drop_column("opening_plies")
