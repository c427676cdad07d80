"""The review's health attacks over real HTTP with real tokens (issue 19, item 1): the office, a wali kelas, a
musyrif and one who is both ask the MCP server (a uvicorn socket) for clinic counts of the school whose Khadijah 4
holds one girl of each class, served by the data service on its own socket; nothing that singles a child out comes
back, and the clinic still gets exact counts."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.auth.conftest import Mcp, jwt_settings, mcp_in_thread, uvicorn_thread
from tests.auth.idp import Idp
from tests.auth.support import bearer_client
from tests.e2e.conftest import free_port
from tests.server.features.test_kesehatan_rekap import LONE, OCTOBER, attacks, nothing_recoverable, seed_school

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROLES = {"kantor": ["all"], "wali-8a": ["kelas:8A"], "musyrifah-k4": ["kamar:Khadijah 4"],
         "wali-dan-musyrifah": ["kelas:8A", "kamar:Khadijah 4"], "bk": ["peran:bk"]}  # fmt: skip


@pytest.fixture
async def service(tmp_path: Path) -> Iterator[str]:
    app: FastAPI = await seed_school(f"sqlite:///{tmp_path / 'asrama.db'}")
    port = free_port()
    with uvicorn_thread(app, port):
        yield f"http://127.0.0.1:{port}"
    app.state.engine.dispose()


@pytest.fixture
def mcp(idp: Idp, service: str) -> Iterator[Mcp]:
    with mcp_in_thread(api_url=service, **jwt_settings(idp)) as server:
        yield server


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("role", list(ROLES))
async def test_no_role_but_the_clinic_recovers_a_childs_visits(mcp: Mcp, idp: Idp, era: str, role: str) -> None:
    token = idp.mint(mcp.public_url, sub=role, asrama_scope=ROLES[role])
    async with bearer_client(mcp.url, token, era) as client:
        answers = await attacks(client)
    for body in answers:
        nothing_recoverable(body)
        assert LONE not in json.dumps(body)
    expected = {"kantor": 3, "wali-8a": 2, "wali-dan-musyrifah": 1}.get(role, 0)  # wali-8a: unnamed is 8A too
    assert len(answers) == expected


async def test_the_clinic_gets_the_lone_girls_exact_count(mcp: Mcp, idp: Idp) -> None:
    token = idp.mint(mcp.public_url, sub="klinik", asrama_scope=["all", "peran:kesehatan"])
    async with bearer_client(mcp.url, token, "2026-07-28") as client:
        result = await client.call_tool("rekap_kesehatan", {**OCTOBER, "kelas": "8A", "kamar": "Khadijah 4"})
    assert result.structured_content is not None and result.structured_content["kunjungan"] == 1
