"""Live updates as hosts get them: real `mcp-asrama serve` processes following a real data service's change feed.

- over stdio, in each era: `subscriptions/listen` (2026-07-28) and `resources/subscribe` (the handshake);
- over HTTP: a listener on one MCP replica hears a roll call confirmed through another replica;
- the feed resumes (Last-Event-ID) after the service was killed: a change made meanwhile still arrives.
"""

import signal
import subprocess
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPDeprecationWarning, StdioServerParameters
from mcp.client.subscriptions import Subscription
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import INVALID_REQUEST, ResourceUpdatedNotification

from mcp_asrama.server.app import build_server
from mcp_asrama.server.live import NO_SESSION
from mcp_asrama.server.settings import ServerSettings
from tests.auth.conftest import Mcp, mcp_process
from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up
from tests.e2e.test_writes_stdio import Person

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HARI = "2026-10-07"  # a school day without records in the tutorial's data
ABSENSI = f"asrama://absensi/{HARI}"
STATUSES = ["hadir", "sakit", "alpa", "izin"]
WAIT = 10.0  # seconds a change may take to arrive (it takes milliseconds)


def roll_call(service: str, status: str, id_anak: str = "A001") -> None:
    """Record one student's attendance on HARI straight at the service (as another program would)."""
    entri = [{"id_anak": id_anak, "status": status}]
    response = httpx2.post(
        f"{service}/absensi/{HARI}", json={"entri": entri}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 200, response.text


async def next_update(subscription: Subscription) -> str:
    with anyio.fail_after(WAIT):
        event = await anext(subscription)
    assert isinstance(event, ResourceUpdated)
    return event.uri


async def first_update_after(write: Callable[[str], None], updates: Callable[[], Awaitable[str]]) -> str:
    """The first update once the server follows the feed: a process may still be connecting to it when the
    listener is acknowledged, so write (a new status each time) until one arrives."""
    for status in STATUSES * 5:
        write(status)
        with anyio.move_on_after(1.0):
            return await updates()
    raise AssertionError("no update arrived")


# --- stdio ------------------------------------------------------------------------------------------------------


async def test_a_stdio_listener_hears_every_roll_call_written_at_the_service(
    server_env: dict[str, str], live_service: str
) -> None:
    params = StdioServerParameters(command=EXECUTABLE, args=["serve"], env=server_env)
    async with (
        Client(params, mode="2026-07-28", cache=None) as client,
        client.listen(resource_subscriptions=[ABSENSI, "asrama://anak/A002"]) as subscription,
    ):
        assert await first_update_after(lambda s: roll_call(live_service, s), lambda: next_update(subscription)) in (
            ABSENSI,
            "asrama://anak/A001",  # not subscribed: never delivered
        )
        roll_call(live_service, "sakit", id_anak="A002")
        assert {await next_update(subscription), await next_update(subscription)} == {ABSENSI, "asrama://anak/A002"}


async def test_a_handshake_stdio_session_hears_what_it_subscribed_to(
    server_env: dict[str, str], live_service: str
) -> None:
    send, received = anyio.create_memory_object_stream[str](100)

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            await send.send(str(message.params.uri))

    async def next_uri() -> str:
        with anyio.fail_after(WAIT):
            return await received.receive()

    params = StdioServerParameters(command=EXECUTABLE, args=["serve"], env=server_env)
    with send, received, warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # resources/subscribe left the 2026-07-28 core
        async with Client(params, mode="legacy", cache=None, message_handler=on_message) as client:
            await client.subscribe_resource(ABSENSI)
            assert await first_update_after(lambda s: roll_call(live_service, s), next_uri) == ABSENSI
            await client.unsubscribe_resource(ABSENSI)
            await client.subscribe_resource("asrama://anak/A003")
            await anyio.sleep(0.5)
            while True:  # drop what the first writes still sent
                try:
                    received.receive_nowait()
                except anyio.WouldBlock:
                    break
            roll_call(live_service, "sakit", id_anak="A003")
            assert await next_uri() == "asrama://anak/A003"
            await anyio.sleep(0.5)  # the day's update, were it sent, would have come by now
            with pytest.raises(anyio.WouldBlock):
                received.receive_nowait()


# --- HTTP: two replicas ------------------------------------------------------------------------------------------


@pytest.fixture
def replicas(server_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[Mcp, Mcp]]:
    """Two `mcp-asrama serve --transport http` replicas on one data service, writes on."""
    env = {key: value for key, value in server_env.items() if key.startswith("ASRAMA_")}
    env["ASRAMA_WRITES"] = "on"
    with mcp_process([], env, tmp_path) as first, mcp_process([], env, tmp_path) as second:
        yield first, second


async def test_a_listener_on_one_replica_hears_a_roll_call_confirmed_on_another(
    replicas: tuple[Mcp, Mcp], live_service: str
) -> None:
    listening, writing = replicas
    async with (
        Client(listening.url, mode="2026-07-28", cache=None) as listener,
        listener.listen(resource_subscriptions=[ABSENSI]) as subscription,
        Client(writing.url, mode="2026-07-28", cache=None, elicitation_callback=Person()) as writer,
    ):
        assert await first_update_after(lambda s: roll_call(live_service, s), lambda: next_update(subscription))
        result = await writer.call_tool(
            "catat_absensi", {"tanggal": HARI, "entri": [{"id_anak": "A003", "status": "sakit"}]}
        )
        assert not result.is_error, result.content
        assert await next_update(subscription) == ABSENSI


async def test_a_handshake_subscription_over_stateless_http_is_told_to_listen(replicas: tuple[Mcp, Mcp]) -> None:
    async with Client(replicas[0].url, mode="legacy", cache=None) as client:
        with warnings.catch_warnings(), pytest.raises(MCPError) as refused:
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource(ABSENSI)
    assert refused.value.error.code == INVALID_REQUEST
    assert refused.value.error.message == NO_SESSION


# --- the feed resumes --------------------------------------------------------------------------------------------


@pytest.fixture
def live_db(tmp_path: Path) -> str:
    """A database with the tutorial's data, for several service processes."""
    db_url = f"sqlite:///{tmp_path / 'shared.db'}"
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    return db_url


@asynccontextmanager
async def service_on(port: int, db_url: str, folder: Path) -> AsyncIterator[subprocess.Popen[Any]]:
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(folder))
    log = folder / f"service-{port}-{free_port()}.log"
    process = start([EXECUTABLE, "service", "--port", str(port), "--buat", "--db", db_url], env, log)
    try:
        wait_until_up(port, process, log)
        yield process
    finally:
        stop(process)


async def test_a_change_made_while_the_feed_was_down_still_arrives(tmp_path: Path, live_db: str) -> None:
    """The MCP server follows service process A; A is killed; a roll call goes through service process B (same
    database); A comes back on its port: the follower resumes with Last-Event-ID and the change arrives."""
    port, other = free_port(), free_port()
    settings = ServerSettings(api_url=f"http://127.0.0.1:{port}", api_token=TOKEN)
    b = f"http://127.0.0.1:{other}"
    async with (
        service_on(port, live_db, tmp_path) as followed,
        service_on(other, live_db, tmp_path),
        Client(build_server(settings), mode="2026-07-28", cache=None) as client,
        client.listen(resource_subscriptions=[ABSENSI]) as subscription,
    ):
        assert await first_update_after(lambda s: roll_call(b, s), lambda: next_update(subscription)) == ABSENSI
        followed.send_signal(signal.SIGKILL)
        followed.wait(timeout=5)
        roll_call(b, "sakit", id_anak="A003")  # nobody streams it now
        async with service_on(port, live_db, tmp_path):
            assert await next_update(subscription) == ABSENSI


# --- shutdown ----------------------------------------------------------------------------------------------------


async def test_a_replica_asked_to_stop_ends_its_listens_gracefully_and_exits(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """uvicorn waits for open responses before it stops: the listens are ended first (the final result frame), so
    a SIGTERM (systemd, nginx failover drills) stops the replica at once and the host knows to listen again."""
    port = free_port()
    log = tmp_path / "mcp-stop.log"
    process = start([EXECUTABLE, "serve", "--transport", "http", "--port", str(port)], server_env, log)
    try:
        wait_until_up(port, process, log)
        async with (
            Client(f"http://127.0.0.1:{port}/mcp", mode="2026-07-28", cache=None) as client,
            client.listen(resource_subscriptions=[ABSENSI]) as subscription,
        ):
            process.terminate()
            with anyio.fail_after(WAIT):
                events = [event async for event in subscription]  # ends without raising SubscriptionLost
        assert events == []
        assert process.wait(timeout=WAIT) is not None
    finally:
        stop(process)


# --- once, and only to who may see ------------------------------------------------------------------------------


async def updates_within(subscription: Subscription, seconds: float) -> list[str]:
    """Every update that arrives within `seconds`."""
    found: list[str] = []
    with anyio.move_on_after(seconds):
        async for event in subscription:
            assert isinstance(event, ResourceUpdated)
            found.append(event.uri)
    return found


@pytest.fixture
def http_url(server_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """One `serve --transport http` process (loopback, no auth) whose operator sees class 8B only (A002)."""
    env = {key: value for key, value in server_env.items() if key.startswith("ASRAMA_")}
    with mcp_process([], {**env, "ASRAMA_STDIO_SCOPE": "kelas:8B"}, tmp_path) as mcp:
        yield mcp.url


async def test_an_http_listener_hears_each_change_once_and_only_of_students_it_may_see(
    http_url: str, live_service: str
) -> None:
    """Both response-mode apps used to run the lifespan, each following the feed: every update came twice. A
    roll call of A001 (7A, Al-Fatih 1) is not told to a listener who sees class 8B, one of A002 (8B) is."""
    async with (
        Client(http_url, mode="2026-07-28", cache=None) as client,
        client.listen(resource_subscriptions=[ABSENSI]) as subscription,
    ):
        assert await first_update_after(lambda s: roll_call(live_service, s, "A002"), lambda: next_update(subscription))
        await updates_within(subscription, 1.0)  # what the warm-up writes still sent
        roll_call(live_service, "sakit", id_anak="A002")
        assert await updates_within(subscription, 1.5) == [ABSENSI]
        roll_call(live_service, "alpa", id_anak="A001")
        assert await updates_within(subscription, 1.5) == []


async def test_a_handshake_session_hears_only_of_students_it_may_see(
    server_env: dict[str, str], live_service: str
) -> None:
    send, received = anyio.create_memory_object_stream[str](100)

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            await send.send(str(message.params.uri))

    async def within(seconds: float) -> list[str]:
        found: list[str] = []
        with anyio.move_on_after(seconds):
            while True:
                found.append(await received.receive())
        return found

    env = {**server_env, "ASRAMA_STDIO_SCOPE": "kamar:Aisyah 2"}  # A003 only
    params = StdioServerParameters(command=EXECUTABLE, args=["serve"], env=env)
    with send, received, warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with Client(params, mode="legacy", cache=None, message_handler=on_message) as client:
            await client.subscribe_resource(ABSENSI)
            assert await first_update_after(lambda s: roll_call(live_service, s, "A003"), received.receive)
            await within(1.0)
            roll_call(live_service, "sakit", id_anak="A001")
            assert await within(1.5) == []
            roll_call(live_service, "alpa", id_anak="A003")
            assert await within(1.5) == [ABSENSI]
