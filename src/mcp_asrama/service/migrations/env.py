"""Alembic's environment for the service's migrations.

Online, the revisions run on the connection `upgrade()` passes in the configuration (already in its locked
transaction), or, from the command line (`python -m mcp_asrama.service.migrations ...`), on the database of
`-x db=URL` (else ASRAMA_DB_URL, else the default file: the same database as the service), under the same lock.
Offline (`--sql`) they are printed for the URL's dialect.
"""

import warnings
from typing import Any

from alembic import context
from sqlalchemy import Connection

from mcp_asrama.service.migrations import (
    foreign_keys_checked,
    ignore_unreflected_expression_indexes,
    include_object,
    locked,
)
from mcp_asrama.service.models import Base

config = context.config

OPTIONS: dict[str, Any] = {
    "target_metadata": Base.metadata,
    "render_as_batch": True,  # SQLite cannot ALTER most things: copy-and-move batches
    "include_object": include_object,
    "compare_type": True,
}


def _url() -> str:
    from mcp_asrama.config import DatabaseSettings

    given = context.get_x_argument(as_dictionary=True).get("db")
    return (DatabaseSettings(db_url=given) if given else DatabaseSettings()).db_url


def _run(connection: Connection) -> None:
    context.configure(connection=connection, **OPTIONS)
    with warnings.catch_warnings(), context.begin_transaction(), foreign_keys_checked(connection):
        ignore_unreflected_expression_indexes()
        context.run_migrations()


def main() -> None:
    if context.is_offline_mode():
        context.configure(url=_url(), literal_binds=True, **OPTIONS)
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from mcp_asrama.service.db import make_engine

    engine = make_engine(_url())
    try:
        with engine.connect() as conn, locked(conn):
            _run(conn)
    finally:
        engine.dispose()


main()
