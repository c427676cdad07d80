"""The school's own sign-in (issue 22): table oauth_state, the authorization server's shared state (codes, refresh
tokens, client registrations, signing keys, sessions) by kind and opaque key, each with its expiry and an optional
family, indexed by both.

Written out in full, not read from the models: a revision stays what it was when it shipped.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"  # no branch labels, no dependencies


def upgrade() -> None:
    op.create_table(
        "oauth_state",
        sa.Column("kind", sa.String(20), primary_key=True),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("value", sa.JSON, nullable=False),
        sa.Column("family", sa.String(128)),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_oauth_state_family", "oauth_state", ["family"])
    op.create_index("ix_oauth_state_expires_at", "oauth_state", ["expires_at"])


def downgrade() -> None:
    op.drop_table("oauth_state")
