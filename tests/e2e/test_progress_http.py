"""Progress over Streamable HTTP: a real `mcp-asrama serve --transport http` process, in both protocol eras.

A request with a progress token is answered with an SSE stream, its `notifications/progress` ahead of its result;
one without gets its result alone, as one JSON body. The server's operator scope is a room and a class, so a range
rekap is one request per side of the scope: two steps.
"""

from typing import Any

import httpx2
import pytest
from mcp import Client

from tests.auth.support import ERAS, rpc
from tests.http_rpc import messages

pytestmark = pytest.mark.e2e

RANGE = {"dari": "2026-10-01", "sampai": "2026-10-31"}


@pytest.fixture
def server_env(server_env: dict[str, str]) -> dict[str, str]:
    """The e2e server's environment, its operator narrowed to one of the tutorial's rooms and one class."""
    return {**server_env, "ASRAMA_STDIO_SCOPE": "kamar:Al-Fatih 1,kelas:7A"}


def call(era: str, token: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """A raw `rekap_absensi` call of `era`, asking for progress under `token` when given."""
    body, headers = rpc("tools/call", {"name": "rekap_absensi", "arguments": RANGE}, era=era)
    if token is not None:
        body["params"].setdefault("_meta", {})["progressToken"] = token
    return body, headers


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_the_sdk_client_hears_each_step_over_http(mcp_url: str, era: str) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append((done, total, message))

    async with Client(mcp_url, mode=era, cache=None) as client:
        result = await client.call_tool("rekap_absensi", RANGE, progress_callback=progress)
    assert not result.is_error
    assert reports == [(1, 2, "halaman 1 dari 2"), (2, 2, "halaman 2 dari 2")]


@pytest.mark.parametrize("era", ERAS)
def test_progress_travels_in_the_stream_ahead_of_the_result_only_when_asked(mcp_url: str, era: str) -> None:
    body, headers = call(era, "rekap-7")
    asked = httpx2.post(mcp_url, json=body, headers=headers, timeout=15)
    assert asked.headers["content-type"].startswith("text/event-stream")
    *notes, result = messages(asked)
    assert [n["method"] for n in notes] == ["notifications/progress"] * 2
    assert [(n["params"]["progressToken"], n["params"]["progress"], n["params"]["total"]) for n in notes] == [
        ("rekap-7", 1, 2),
        ("rekap-7", 2, 2),
    ]
    assert result["id"] == 1 and result["result"]["isError"] is False

    body, headers = call(era, None)
    unasked = httpx2.post(mcp_url, json=body, headers=headers, timeout=15)
    assert unasked.headers["content-type"].startswith("application/json")  # no stream to pay for
    silent = messages(unasked)
    assert len(silent) == 1 and silent[0]["result"]["structuredContent"] == result["result"]["structuredContent"]
