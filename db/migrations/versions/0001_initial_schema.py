"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-21 05:15:05.205528
"""

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('agents',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('type', sa.String(length=100), nullable=False),
    sa.Column('params', sa.Text(), nullable=False),
    sa.Column('game', sa.String(length=100), nullable=True),
    sa.Column('checkpoint', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('tournaments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=True),
    sa.Column('game_id', sa.String(length=100), nullable=False),
    sa.Column('game_version', sa.String(length=50), nullable=False),
    sa.Column('game_params', sa.Text(), nullable=False),
    sa.Column('format', sa.String(length=50), nullable=False),
    sa.Column('rounds', sa.Integer(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('max_turns', sa.Integer(), nullable=False),
    sa.Column('time_per_move', sa.Double(), nullable=True),
    sa.Column('players', sa.Integer(), nullable=False),
    sa.Column('settings', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('matches',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tournament_id', sa.Integer(), nullable=False),
    sa.Column('index', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.String(length=100), nullable=False),
    sa.Column('game_version', sa.String(length=50), nullable=False),
    sa.Column('game_params', sa.Text(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('turns', sa.Integer(), nullable=True),
    sa.Column('reason', sa.String(length=30), nullable=True),
    sa.Column('detail', sa.Text(), nullable=True),
    sa.Column('moves', sa.LargeBinary(), nullable=True),
    sa.Column('legal_counts', sa.LargeBinary(), nullable=True),
    sa.Column('duration', sa.Double(), nullable=True),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['tournament_id'], ['tournaments.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tournament_id', 'index', name='uq_match_schedule')
    )
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.create_index('ix_matches_game', ['game_id', 'game_version', 'status'], unique=False)

    op.create_table('match_seats',
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('seat', sa.Integer(), nullable=False),
    sa.Column('agent', sa.String(length=300), nullable=False),
    sa.Column('agent_type', sa.String(length=100), nullable=False),
    sa.Column('agent_params', sa.Text(), nullable=False),
    sa.Column('agent_version', sa.String(length=50), nullable=False),
    sa.Column('score', sa.Double(), nullable=True),
    sa.Column('outcome', sa.String(length=10), nullable=True),
    sa.Column('rank', sa.Integer(), nullable=True),
    sa.Column('think_time', sa.Double(), nullable=True),
    sa.Column('moves', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['match_id'], ['matches.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('match_id', 'seat')
    )
    with op.batch_alter_table('match_seats', schema=None) as batch_op:
        batch_op.create_index('ix_match_seats_agent', ['agent'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('match_seats', schema=None) as batch_op:
        batch_op.drop_index('ix_match_seats_agent')

    op.drop_table('match_seats')
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_index('ix_matches_game')

    op.drop_table('matches')
    op.drop_table('tournaments')
    op.drop_table('agents')
