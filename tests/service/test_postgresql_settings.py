"""What the service sets on each PostgreSQL connection: JIT compilation off (a whole school's rekap would spend
0.1–0.8 s compiling a plan that runs in 0.3 s without it, bench/scale.py), still off after a rollback."""

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from mcp_asrama.service.db import make_engine, make_sessionmaker
from tests.conftest import PG_URL, fresh_database

pytestmark = pytest.mark.skipif(not PG_URL, reason="ASRAMA_TEST_PG_URL is not set")


@pytest.fixture
def pg_url(tmp_path: Any) -> Iterator[str]:
    with fresh_database("postgresql", tmp_path) as url:
        yield url


def test_jit_is_off_on_every_connection_and_stays_off_after_a_rollback(pg_url: str) -> None:
    engine = make_engine(pg_url)
    try:
        sessions = make_sessionmaker(engine)
        for _ in range(2):  # the second session reuses the pooled connection the first one rolled back
            with sessions() as session:
                assert session.scalar(text("SHOW jit")) == "off"
                session.rollback()
                assert session.scalar(text("SHOW jit")) == "off"
        with engine.connect() as connection:
            connection.invalidate()  # a new connection is made and set up the same way
        with sessions() as session:
            assert session.scalar(text("SHOW jit")) == "off"
    finally:
        engine.dispose()
