"""the schedule as one packed column of the tournament; match rows only for played matches

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21 07:40:00

Writing three rows per scheduled match up front (then updating them) cost more than the rest of
storing a match. The seatings now live in `tournaments.schedule` (agent positions in the settings'
agent list, packed as unsigned 16-bit ints after a b"H" type code); pending matches have no row.
Matches are found by game through their tournaments, so the index on the matches' game columns goes.
"""

import json
from array import array

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch_op:
        batch_op.add_column(sa.Column("schedule", sa.LargeBinary(), nullable=True))
        batch_op.add_column(sa.Column("scheduled", sa.Integer(), server_default="0", nullable=False))
    connection = op.get_bind()
    tournaments = connection.execute(sa.text("SELECT id, settings FROM tournaments")).all()
    for tournament_id, settings_text in tournaments:
        settings = json.loads(settings_text)
        agents = settings.setdefault("agents", [])
        positions = {agent["label"]: i for i, agent in enumerate(agents)}
        seats = connection.execute(
            sa.text(
                'SELECT m."index", s.agent, s.agent_type, s.agent_version FROM matches m '
                'JOIN match_seats s ON s.match_id = m.id WHERE m.tournament_id = :tid ORDER BY m."index", s.seat'
            ),
            {"tid": tournament_id},
        ).all()
        for _index, label, agent_type, version in seats:
            if label not in positions:  # a tournament written by hand (or by a script) may not list its agents
                positions[label] = len(agents)
                agents.append({"label": label, "type": agent_type, "params": {}, "version": version})
        packed = array("H", [positions[label] for _index, label, _type, _version in seats])
        scheduled = len({index for index, *_rest in seats})
        connection.execute(
            sa.text("UPDATE tournaments SET schedule = :schedule, scheduled = :scheduled, settings = :settings WHERE id = :tid"),
            {"schedule": b"H" + packed.tobytes(), "scheduled": scheduled, "settings": json.dumps(settings, sort_keys=True),
             "tid": tournament_id},
        )  # fmt: skip
    pending = "SELECT id FROM matches WHERE status = 'pending'"
    connection.execute(sa.text(f"DELETE FROM match_seats WHERE match_id IN ({pending})"))
    connection.execute(sa.text("DELETE FROM matches WHERE status = 'pending'"))
    with op.batch_alter_table("matches") as batch_op:
        batch_op.drop_index("ix_matches_game")


def downgrade() -> None:
    # Pending matches would need their rows back; a database is upgraded, never downgraded, past this point.
    raise NotImplementedError("0005 cannot be downgraded: pending matches have no rows to restore")
