"""What a listen may hold and what it costs, over real HTTP: the MCP server and the data service each under uvicorn
on 127.0.0.1, every request that reaches the service counted.

Tutorial data: A001 (7A, Al-Fatih 1), A002 (8B, Al-Fatih 1), A003 (7A, Aisyah 2).
"""

from collections.abc import Iterator
from contextlib import AsyncExitStack
from datetime import date, timedelta
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST

from mcp_asrama.server.listen_gate import MAX_URIS, total_listens
from tests.auth.conftest import mcp_in_thread, uvicorn_thread
from tests.auth.support import MODERN, post
from tests.conftest import TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.e2e.conftest import free_port
from tests.server.conftest import make_service
from tests.server.support import Recording

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

DAYS = [f"asrama://absensi/{date(2026, 9, 1) + timedelta(days=n)}" for n in range(40)]
STUDENTS = [
    f"asrama://anak/{i}{suffix}" for i in ("A001", "A002", "A003") for suffix in ("", "/hafalan", "/pelanggaran")
]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, Recording]]:
    """The data service under uvicorn, recording every request."""
    db_url = f"sqlite:///{tmp_path / 'asrama.db'}"
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    recording = Recording(make_service(db_url))
    port = free_port()
    with uvicorn_thread(recording, port):
        yield f"http://127.0.0.1:{port}", recording


async def test_a_listen_of_many_resources_makes_a_bounded_number_of_service_requests(
    service: tuple[str, Recording],
) -> None:
    """40 days and 9 student resources: one read per URI made 49+ requests; now a family is checked at once."""
    url, recording = service
    uris = [*DAYS, *STUDENTS]
    with mcp_in_thread(api_url=url) as mcp:
        before = len(recording.requests)
        async with (
            Client(mcp.url, mode=MODERN, cache=None) as client,
            client.listen(resource_subscriptions=uris) as subscription,
        ):
            assert subscription.honored.resource_subscriptions == uris
    made = len(recording.requests) - before
    assert made <= 15, recording.paths[before:]


async def test_a_listen_naming_an_unseen_student_among_many_is_refused(service: tuple[str, Recording]) -> None:
    url, _ = service
    uris = ["asrama://anak/A003", "asrama://anak/A003/hafalan", "asrama://anak/A001", "asrama://anak/A999"]
    with mcp_in_thread(api_url=url, stdio_scope=["kamar:Aisyah 2"]) as mcp:
        async with Client(mcp.url, mode=MODERN, cache=None) as client:
            with pytest.raises(MCPError) as refused:
                async with client.listen(resource_subscriptions=uris):
                    pass
    assert refused.value.error.code == INVALID_PARAMS
    assert refused.value.error.message.startswith("Tidak dapat berlangganan asrama://anak/A001: ")


async def test_a_listen_of_more_than_50_resources_is_refused_without_a_read(service: tuple[str, Recording]) -> None:
    url, recording = service
    uris = [f"asrama://absensi/{date(2026, 1, 1) + timedelta(days=n)}" for n in range(MAX_URIS + 1)]
    with mcp_in_thread(api_url=url) as mcp:
        before = len(recording.requests)
        async with Client(mcp.url, mode=MODERN, cache=None) as client:
            with pytest.raises(MCPError) as refused:
                async with client.listen(resource_subscriptions=uris):
                    pass
    assert refused.value.error.code == INVALID_PARAMS
    assert f"paling banyak {MAX_URIS}" in refused.value.error.message
    assert len(recording.requests) == before


async def test_one_subject_holds_at_most_listen_maks_streams(service: tuple[str, Recording]) -> None:
    url, _ = service
    with mcp_in_thread(api_url=url, listen_maks=2) as mcp:
        async with AsyncExitStack() as open_:
            for _ in range(2):
                client = await open_.enter_async_context(Client(mcp.url, mode=MODERN, cache=None))
                await open_.enter_async_context(client.listen(resource_subscriptions=[DAYS[0]]))
            async with Client(mcp.url, mode=MODERN, cache=None) as third:
                with pytest.raises(MCPError) as refused:
                    async with third.listen(resource_subscriptions=[DAYS[0]]):
                        pass
                assert refused.value.error.code == INVALID_REQUEST
                assert "paling banyak 2 subscriptions/listen" in refused.value.error.message
            async with httpx2.AsyncClient(timeout=10) as http:
                assert (await http.get(f"{mcp.base}/healthz")).status_code == 200
        async with (  # the streams ended: their slots are free
            Client(mcp.url, mode=MODERN, cache=None) as again,
            again.listen(resource_subscriptions=[DAYS[0]]) as subscription,
        ):
            assert subscription.honored.resource_subscriptions == [DAYS[0]]


async def test_listens_in_all_stay_below_the_connection_cap(service: tuple[str, Recording]) -> None:
    """max_connections 8: at most 6 listens, whoever holds them; calls still get through."""
    url, _ = service
    assert total_listens(8) == 6 and total_listens(256) == 192 and total_listens(1) == 0
    with mcp_in_thread(api_url=url, listen_maks=100, max_connections=8) as mcp:
        async with AsyncExitStack() as open_:
            for _ in range(6):
                client = await open_.enter_async_context(Client(mcp.url, mode=MODERN, cache=None))
                await open_.enter_async_context(client.listen(resource_subscriptions=[DAYS[0]]))
            with pytest.raises(MCPError) as refused:
                async with client.listen(resource_subscriptions=[DAYS[0]]):
                    pass
            assert refused.value.error.code == INVALID_REQUEST
            assert "(6)" in refused.value.error.message
            assert post(mcp.url, "resources/read", {"uri": "asrama://kamar"}).status_code == 200


def test_discover_does_not_advertise_list_changed_it_never_sends(service: tuple[str, Recording]) -> None:
    url, _ = service
    with mcp_in_thread(api_url=url) as mcp:
        found = post(mcp.url, "server/discover", era=MODERN).json()["result"]["capabilities"]
    assert all(found[kind]["listChanged"] is False for kind in ("tools", "prompts", "resources")), found
    assert found["resources"]["subscribe"] is True
