"""Storage: the only package that knows SQL. SQLAlchemy 2.0 models, sessions, queries, Alembic migrations."""
