"""The browser page's binding (`confirm_page.Halaman`): a loopback port, bound on the first usulan, closed once no
usulan waits (expired, or no browser to show it) and at the end of the lifespan. The whole flow through a real
stdio server, a browser and the data service is in tests/e2e/test_confirm_page.py."""

import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio
import httpx2
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from mcp_asrama.client import AsramaClient, make_http_client
from mcp_asrama.server.confirm_page import NO_BROWSER, Halaman
from mcp_asrama.server.features.catat_absensi import CATAT
from mcp_asrama.server.features.write import Konfirmasi
from mcp_asrama.server.guard.access import SEMUA
from mcp_asrama.server.guard.scoped import ScopedReader
from mcp_asrama.server.guard.usulan import MemoryUsulan, Usulan, digest, new_secret
from tests.e2e.conftest import free_port

pytestmark = pytest.mark.anyio


async def waiting(store: MemoryUsulan, seconds: float) -> tuple[str, str]:
    """A roll call waiting on the page that expires in `seconds`: its id and its page secret."""
    id_usulan, secret = new_secret(), new_secret()
    question = "Catat absensi 2026-10-21: 1 anak"
    roll_call = {"tanggal": "2026-10-21", "entri": [{"id_anak": "A002", "status": "sakit"}], "kamar": None,
                 "kelas": None, "yang_lain": None}  # fmt: skip
    await store.simpan(
        Usulan(id_usulan, "local", "catat_absensi", roll_call, question, digest(question), "halaman", None,
               digest(secret), time.time() + seconds)
    )  # fmt: skip
    return id_usulan, secret


def refused(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:`port`."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.05)


@dataclass
class Pages:
    """A Halaman in a task group, its store, the URLs its 'browser' was given, and whether that browser opens."""

    page: Halaman
    store: MemoryUsulan
    opened: list[str] = field(default_factory=list)
    works: bool = True


@pytest.fixture
async def pages() -> AsyncIterator[Pages]:
    """The page of a server whose data service is down (nothing listens at its URL)."""
    store = MemoryUsulan()
    book = Konfirmasi(saluran=("halaman",), store=store, menit=10, stdio=True)
    book.tambah(CATAT)

    def browser(url: str) -> bool:
        found.opened.append(url)
        return found.works

    service = make_http_client(f"http://127.0.0.1:{free_port()}", token=None, timeout=5)
    async with service as http, anyio.create_task_group() as tasks:
        found = Pages(Halaman(book, ScopedReader(AsramaClient(http), SEMUA), tasks, opener=browser), store)
        yield found
        await found.page.tutup()
        tasks.cancel_scope.cancel()


async def test_the_page_binds_loopback_only_while_an_usulan_waits(pages: Pages) -> None:
    page = pages.page
    assert page.port is None  # nothing waits: nothing bound
    id_usulan, secret = await waiting(pages.store, 0.8)
    await page.buka(id_usulan, secret)
    port = page.port
    assert port is not None and page.server is not None
    assert page.server.socket.getsockname() == ("127.0.0.1", port)
    assert pages.opened == [f"http://127.0.0.1:{port}/usulan/{id_usulan}#{secret}"]
    async with httpx2.AsyncClient() as http:
        shown = await http.get(f"http://127.0.0.1:{port}/usulan/{id_usulan}")
    assert shown.status_code == 200 and 'data-keputusan="setuju"' in shown.text
    assert "connect-src 'self'" in shown.headers["content-security-policy"] and secret not in shown.text

    await until(lambda: page.port is None)  # expired: nothing waits any more
    assert refused(port)

    again, secret_again = await waiting(pages.store, 60)  # the next usulan binds again
    await page.buka(again, secret_again)
    assert page.port is not None and not refused(page.port)
    last = page.port
    await page.tutup()  # the end of the server's lifespan
    assert page.port is None and refused(last)


async def test_without_a_browser_the_write_is_refused_and_nothing_stays_bound(pages: Pages) -> None:
    pages.works = False
    id_usulan, secret = await waiting(pages.store, 60)
    with pytest.raises(ToolError) as caught:
        await pages.page.buka(id_usulan, secret)
    assert str(caught.value) == NO_BROWSER and secret not in str(caught.value)
    [url] = pages.opened
    port = int(url.split(":")[2].split("/")[0])
    await until(lambda: pages.page.port is None and refused(port))


async def test_a_service_down_at_the_click_is_said_and_the_person_can_click_again(pages: Pages) -> None:
    id_usulan, secret = await waiting(pages.store, 60)
    await pages.page.buka(id_usulan, secret)
    origin = f"http://127.0.0.1:{pages.page.port}"
    async with httpx2.AsyncClient(base_url=origin, headers={"Origin": origin}) as http:
        tries = [
            await http.post(f"/usulan/{id_usulan}/keputusan", json={"rahasia": secret, "keputusan": "setuju"})
            for _ in range(2)
        ]
    assert [t.status_code for t in tries] == [503, 503]  # not "already decided": nothing was written
    assert all("tidak dapat dihubungi" in t.json()["pesan"] for t in tries)
    assert await pages.store.putusan(id_usulan) is None and pages.page.port is not None  # it still waits
