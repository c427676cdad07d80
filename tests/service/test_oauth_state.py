"""`/oauth-state`, the school's own sign-in's shared state: add only when absent (the stored value unchanged
otherwise), store, read, take once (of concurrent adds and takes exactly one wins), delete one and a family; an
expired row is absent everywhere and purged by later writes; bad kinds, keys and bodies 422, no token 401; the
client's calls against the real app; both dialects."""

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from sqlalchemy import func, select

from mcp_asrama.client import AsramaClient, NotFound, ServiceRejected
from mcp_asrama.config import ServiceSettings
from mcp_asrama.contract.oauth_state import StateIn
from mcp_asrama.service.app import create_app
from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models.oauth_state import OAuthState
from tests.conftest import TOKEN, serve_db, service_client

pytestmark = pytest.mark.anyio
CODE = {"value": {"client_id": "c1", "scopes": ["asrama"]}, "ttl": 60, "family": "grant-1"}


@pytest.fixture
async def service(db_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    async for client in serve_db(db_url):
        yield client


def stored_rows(url: str) -> int:
    """Rows in the table, expired ones too."""
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            return int(session.scalar(select(func.count()).select_from(OAuthState)) or 0)
    finally:
        engine.dispose()


async def test_add_stores_once_and_then_answers_the_stored_value_unchanged(service: httpx2.AsyncClient) -> None:
    first = await service.post("/oauth-state/code/h1", json=CODE)
    assert (first.status_code, first.json()) == (201, {"value": CODE["value"], "created": True})
    again = await service.post("/oauth-state/code/h1", json={**CODE, "value": {"client_id": "lain"}})
    assert (again.status_code, again.json()) == (200, {"value": CODE["value"], "created": False})
    assert (await service.get("/oauth-state/code/h1")).json() == {"value": CODE["value"], "created": False}
    other_kind = await service.post("/oauth-state/refresh/h1", json={**CODE, "value": {"n": 2}})
    assert (other_kind.status_code, other_kind.json()["value"]) == (201, {"n": 2})  # kind and key are the key


async def test_put_stores_or_replaces_and_says_which(service: httpx2.AsyncClient) -> None:
    new = await service.put("/oauth-state/client/c1", json={"value": {"v": 1}, "ttl": 60})
    assert (new.status_code, new.json()) == (200, {"value": {"v": 1}, "created": True})
    replaced = await service.put("/oauth-state/client/c1", json={"value": {"v": 2}, "ttl": 60})
    assert (replaced.status_code, replaced.json()) == (200, {"value": {"v": 2}, "created": False})
    assert (await service.get("/oauth-state/client/c1")).json()["value"] == {"v": 2}


async def test_take_answers_once_then_404_and_delete_is_204_held_or_not(service: httpx2.AsyncClient) -> None:
    await service.post("/oauth-state/code/h2", json=CODE)
    taken = await service.post("/oauth-state/code/h2/take")
    assert (taken.status_code, taken.json()["value"]) == (200, CODE["value"])
    assert (await service.post("/oauth-state/code/h2/take")).status_code == 404
    assert (await service.get("/oauth-state/code/h2")).status_code == 404
    await service.put("/oauth-state/session/s1", json=CODE)
    for _ in range(2):
        assert (await service.delete("/oauth-state/session/s1")).status_code == 204
    assert (await service.get("/oauth-state/session/s1")).status_code == 404


async def test_a_family_is_dropped_whole_of_every_kind_and_no_other(service: httpx2.AsyncClient) -> None:
    await service.post("/oauth-state/refresh/r1", json=CODE)
    await service.post("/oauth-state/refresh/r2", json=CODE)
    await service.post("/oauth-state/code/c9", json=CODE)
    await service.post("/oauth-state/refresh/r3", json={**CODE, "family": "grant-2"})
    await service.post("/oauth-state/refresh/r4", json={"value": {}, "ttl": 60})
    dropped = await service.delete("/oauth-state", params={"family": "grant-1"})
    assert (dropped.status_code, dropped.json()) == (200, {"deleted": 3})
    assert (await service.delete("/oauth-state", params={"family": "grant-1"})).json() == {"deleted": 0}
    found = {key: (await service.get(f"/oauth-state/refresh/{key}")).status_code for key in ("r1", "r2", "r3", "r4")}
    assert found == {"r1": 404, "r2": 404, "r3": 200, "r4": 200}


async def test_an_expired_row_is_absent_everywhere_and_purged_by_a_later_write(
    service: httpx2.AsyncClient, db_url: str
) -> None:
    short = {**CODE, "ttl": 0.3}
    await service.post("/oauth-state/code/old", json=short)
    await service.post("/oauth-state/refresh/old", json=short)
    assert (await service.get("/oauth-state/code/old")).status_code == 200
    time.sleep(0.5)
    assert (await service.get("/oauth-state/code/old")).status_code == 404
    assert (await service.post("/oauth-state/code/old/take")).status_code == 404
    assert (await service.delete("/oauth-state", params={"family": "grant-1"})).json() == {"deleted": 0}
    await service.post("/oauth-state/refresh/old2", json=short)
    time.sleep(0.5)
    assert stored_rows(db_url) == 1
    added = await service.post("/oauth-state/refresh/old2", json={**CODE, "value": {"baru": True}})
    assert (added.status_code, added.json()) == (201, {"value": {"baru": True}, "created": True})
    replaced = await service.put("/oauth-state/code/gone", json=CODE)
    assert replaced.json()["created"] is True
    assert stored_rows(db_url) == 2  # old2 (added again) and gone: the expired one purged


async def test_concurrent_adds_store_one_and_concurrent_takes_get_it_once(service: httpx2.AsyncClient) -> None:
    async def together(method: str, path: str, bodies: list[Any]) -> list[httpx2.Response]:
        answers: list[httpx2.Response] = []

        async def one(body: Any) -> None:
            answers.append(await service.request(method, path, json=body))

        async with anyio.create_task_group() as group:
            for body in bodies:
                group.start_soon(one, body)
        return answers

    added = await together("POST", "/oauth-state/code/race", [{"value": {"n": n}, "ttl": 60} for n in range(8)])
    assert sorted(a.status_code for a in added) == [200] * 7 + [201]
    assert len({a.json()["value"]["n"] for a in added}) == 1  # every adder sees the one value stored
    taken = await together("POST", "/oauth-state/code/race/take", [None] * 8)
    assert sorted(a.status_code for a in taken) == [200] + [404] * 7
    winner = next(a for a in added if a.status_code == 201).json()["value"]
    assert next(a for a in taken if a.status_code == 200).json()["value"] == winner


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/oauth-state/Code/k", CODE),
        ("GET", "/oauth-state/kode_yang_terlalu_panjang/k", None),
        ("GET", "/oauth-state/code/k%20k", None),
        ("GET", "/oauth-state/code/" + "k" * 129, None),
        ("PUT", "/oauth-state/code/k", {**CODE, "ttl": 0}),
        ("PUT", "/oauth-state/code/k", {**CODE, "ttl": 401 * 86400}),
        ("PUT", "/oauth-state/code/k", {**CODE, "value": ["bukan", "objek"]}),
        ("PUT", "/oauth-state/code/k", {**CODE, "value": {"x": "a" * 17000}}),
        ("PUT", "/oauth-state/code/k", {**CODE, "family": "ada spasi"}),
        ("PUT", "/oauth-state/code/k", {**CODE, "lain": 1}),
        ("DELETE", "/oauth-state", None),
        ("DELETE", "/oauth-state?family=a/b", None),
    ],
)
async def test_bad_kinds_keys_and_bodies_are_422(
    service: httpx2.AsyncClient, method: str, path: str, body: Any
) -> None:
    response = await service.request(method, path, json=body)
    assert response.status_code == 422, response.text


async def test_every_route_needs_the_token(db_url: str) -> None:
    app = create_app(ServiceSettings(db_url=db_url, service_token=TOKEN))
    try:
        async with service_client(app, token=None) as anonymous:
            for method, path in (
                ("POST", "/oauth-state/code/k"),
                ("PUT", "/oauth-state/code/k"),
                ("GET", "/oauth-state/code/k"),
                ("POST", "/oauth-state/code/k/take"),
                ("DELETE", "/oauth-state/code/k"),
                ("DELETE", "/oauth-state?family=f"),
            ):
                assert (await anonymous.request(method, path, json=CODE)).status_code == 401, path
    finally:
        app.state.engine.dispose()


async def test_the_clients_calls_against_the_service(db_url: str) -> None:
    app = create_app(ServiceSettings(db_url=db_url, service_token=TOKEN))
    try:
        async with service_client(app) as http:
            client = AsramaClient(http)
            body = StateIn(value={"a": 1}, ttl=60, family="f")
            assert (await client.state_add("code", "k1", body)).created is True
            assert (await client.state_add("code", "k1", StateIn(value={"a": 2}, ttl=60))).value == {"a": 1}
            assert (await client.state_put("code", "k2", body)).created is True
            assert (await client.state_get("code", "k2")).value == {"a": 1}
            assert (await client.state_take("code", "k2")).value == {"a": 1}
            with pytest.raises(NotFound):
                await client.state_take("code", "k2")
            await client.state_put("code", "k3", body)
            await client.state_drop("code", "k3")
            await client.state_drop("code", "k3")
            with pytest.raises(NotFound):
                await client.state_get("code", "k3")
            await client.state_put("refresh", "k4", body)
            assert await client.state_drop_family("f") == 2  # k1 and k4
            with pytest.raises(NotFound):
                await client.state_get("code", "k1")
            for kind, key in (("KODE", "k"), ("code", "k/1"), ("code", "")):
                with pytest.raises(ValueError, match="kind or key"):
                    await client.state_get(kind, key)
            with pytest.raises(ServiceRejected):
                await client.state_drop_family("a b")
    finally:
        app.state.engine.dispose()
