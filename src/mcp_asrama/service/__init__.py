"""The asrama data service: a FastAPI REST API over SQLAlchemy storage (SQLite or PostgreSQL)."""
