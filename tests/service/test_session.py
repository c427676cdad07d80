"""PostgreSQL going away after a route made its answer (found by bench/soak.py): only the session's closing
ROLLBACK fails, and the answer must still reach the client whole; the next request gets a fresh connection."""

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, event, text

from mcp_asrama.config import ServiceSettings
from mcp_asrama.service.app import create_app
from tests.conftest import PG_URL, TOKEN, TUTORIAL_KAMAR, fresh_database, insert_rows, service_client

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not PG_URL, reason="ASRAMA_TEST_PG_URL is not set")]


@pytest.fixture
def pg_url(tmp_path: Any) -> Iterator[str]:
    with fresh_database("postgresql", tmp_path) as url:
        insert_rows(url, kamar=TUTORIAL_KAMAR, anak=[], absensi=[])
        yield url


async def test_an_answer_stands_when_the_connection_dies_before_the_closing_rollback(pg_url: str) -> None:
    app = create_app(ServiceSettings(db_url=pg_url, service_token=TOKEN))
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    killed: list[int] = []

    def die_before_rollback(conn: Any) -> None:  # what an immediate shutdown of PostgreSQL does at that moment
        if not killed:
            pid = conn.connection.dbapi_connection.info.backend_pid
            with admin.connect() as other:
                other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            killed.append(pid)

    event.listen(app.state.engine, "rollback", die_before_rollback)
    try:
        async with service_client(app) as client:
            first = await client.get("/kamar")
            again = await client.get("/kamar")
    finally:
        app.state.engine.dispose()
        admin.dispose()
    assert killed, "the route's session never rolled back: nothing was tested"
    assert first.status_code == 200
    assert [k["nama"] for k in first.json()["data"]] == [k["nama"] for k in TUTORIAL_KAMAR]
    assert again.status_code == 200
