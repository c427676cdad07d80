"""The shared state of the school's own sign-in (`--auth sekolah`): authorization codes, refresh tokens, client
registrations, signing keys, sessions. Each row lives until `expires_at`; an expired one is never answered and is
deleted by a later write."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class OAuthState(Base):
    """One value by `kind` and `key` (for a secret the caller sends its hash: the service treats keys as opaque);
    `family`: rows dropped together (the refresh tokens of one grant)."""

    __tablename__ = "oauth_state"

    kind: Mapped[str] = mapped_column(String(20), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    value: Mapped[dict[str, Any]] = mapped_column(JSON)
    family: Mapped[str | None] = mapped_column(String(128), index=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
