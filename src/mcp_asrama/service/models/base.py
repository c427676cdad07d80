"""The declarative base every domain's tables derive from."""

from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    """Declarative base of the service's tables."""
