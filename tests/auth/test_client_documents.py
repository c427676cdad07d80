"""Client ID metadata documents: fetched over real HTTPS from 127.0.0.1 (self-signed certificate), checked, cached."""

import json
import logging
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_asrama.server.sekolah.client_documents import ClientDocuments
from tests.auth.oidc.documents import Reply, https_server, self_signed

pytestmark = pytest.mark.anyio
PATH = "/host/client.json"
VALID = {"client_name": "Asrama Host", "redirect_uris": ["http://127.0.0.1:33418/callback"]}


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("cimd"))


@pytest.fixture
def trust(cert: tuple[Path, Path]) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert[0]))


@pytest.fixture
def served(cert: tuple[Path, Path]) -> Iterator[tuple[str, dict[str, Reply], list[str]]]:
    """(base URL, replies to fill, paths fetched)."""
    replies: dict[str, Reply] = {}
    with https_server(cert, replies) as (base, fetched):
        yield base, replies, fetched


@pytest.fixture
def clock() -> Clock:
    return Clock()


def document(url: str, **fields: Any) -> bytes:
    return json.dumps({**VALID, "client_id": url, **fields}).encode()


def reasons(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [getattr(record, "reason", "") for record in caplog.records]


async def test_a_valid_document_is_a_public_client(served: Any, trust: ssl.SSLContext) -> None:
    base, replies, fetched = served
    url = base + PATH
    replies[PATH] = Reply(
        document(url, client_uri="https://host.example/", logo_uri="javascript:alert(1)", scope="a b")
    )
    documents = ClientDocuments(verify=trust, allow_loopback=True)
    client = await documents.client(url)
    await documents.aclose()
    assert client is not None
    assert client.client_id == url and client.client_secret is None
    assert client.token_endpoint_auth_method == "none"
    assert [str(uri) for uri in client.redirect_uris or []] == VALID["redirect_uris"]
    assert client.grant_types == ["authorization_code", "refresh_token"] and client.response_types == ["code"]
    assert client.client_name == "Asrama Host" and str(client.client_uri) == "https://host.example/"
    assert client.logo_uri is None and client.scope == "a b"
    assert fetched == [PATH]


async def test_a_host_name_is_fetched_from_its_checked_address_with_its_own_name(
    served: Any, trust: ssl.SSLContext
) -> None:
    base, replies, fetched = served
    url = base.replace("127.0.0.1", "localhost") + PATH
    replies[PATH] = Reply(document(url))
    documents = ClientDocuments(verify=trust, allow_loopback=True)
    client = await documents.client(url)
    await documents.aclose()
    assert client is not None and client.client_id == url
    assert fetched == [PATH]


@pytest.mark.parametrize(
    "fields",
    [
        {"client_id": "https://other.example/host/client.json"},
        {"client_secret": "s3cret"},
        {"client_secret_expires_at": 0},
        {"token_endpoint_auth_method": "client_secret_basic"},
        {"redirect_uris": []},
        {"redirect_uris": "http://127.0.0.1/cb"},
        {"redirect_uris": ["http://127.0.0.1/cb#frag"]},
        {"redirect_uris": ["not a url"]},
        {"grant_types": ["client_credentials"]},
        {"grant_types": [{"x": 1}]},
        {"response_types": ["token"]},
    ],
    ids=lambda fields: ",".join(f"{key}={value}" for key, value in fields.items()),
)
async def test_an_invalid_document_is_no_client(served: Any, trust: ssl.SSLContext, fields: dict[str, Any]) -> None:
    base, replies, fetched = served
    url = base + PATH
    replies[PATH] = Reply(document(url, **fields))
    documents = ClientDocuments(verify=trust, allow_loopback=True)
    assert await documents.client(url) is None
    await documents.aclose()
    assert fetched == [PATH]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>not json</html>", "not JSON"),
        (b'["a", "list"]', "not a JSON object"),
        (b"[" * 5000 + b"]" * 5000, "not JSON"),
        (b"\xff\xfe\xfa", "not JSON"),
    ],
)
async def test_a_body_that_is_no_json_object_is_no_client(
    served: Any, trust: ssl.SSLContext, caplog: pytest.LogCaptureFixture, body: bytes, reason: str
) -> None:
    base, replies, _ = served
    replies[PATH] = Reply(body)
    documents = ClientDocuments(verify=trust, allow_loopback=True)
    with caplog.at_level(logging.WARNING):
        assert await documents.client(base + PATH) is None
    await documents.aclose()
    assert reasons(caplog) == [reason]
    assert all(b"not json" not in record.getMessage().encode() for record in caplog.records)


async def test_a_redirect_is_not_followed(served: Any, trust: ssl.SSLContext, caplog: pytest.LogCaptureFixture) -> None:
    base, replies, fetched = served
    url = base + PATH
    replies["/elsewhere.json"] = Reply(document(url))
    replies[PATH] = Reply(status=302, headers={"Location": base + "/elsewhere.json"})
    documents = ClientDocuments(verify=trust, allow_loopback=True)
    with caplog.at_level(logging.WARNING):
        assert await documents.client(url) is None
    await documents.aclose()
    assert fetched == [PATH]
    assert reasons(caplog) == ["status 302"]


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
async def test_a_document_over_the_size_cap_is_no_client(
    served: Any, trust: ssl.SSLContext, caplog: pytest.LogCaptureFixture, declared: bool
) -> None:
    base, replies, _ = served
    url = base + PATH
    replies[PATH] = Reply(document(url, client_name="x" * 5000), length=declared)
    documents = ClientDocuments(verify=trust, allow_loopback=True, max_bytes=4096)
    with caplog.at_level(logging.WARNING):
        assert await documents.client(url) is None
    await documents.aclose()
    assert reasons(caplog) == ["too large"]
    roomy = ClientDocuments(verify=trust, allow_loopback=True, max_bytes=8192)
    assert await roomy.client(url) is not None  # the same document under a larger cap: the cap refused it
    await roomy.aclose()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/host/client.json",
        "https://127.0.0.1:{port}",
        "https://127.0.0.1:{port}/",
        "https://127.0.0.1:{port}/host/client.json#x",
        "https://user:pw@127.0.0.1:{port}/host/client.json",
        "https://127.0.0.1:{port}/host/../client.json",
        "https://127.0.0.1:{port}/host/./client.json",
        "https://127.0.0.1:{port}/host/%2e%2E/client.json",
        "https://127.0.0.1:{port}/host\\@evil.example/client.json",
        "https://127.0.0.1:{port}/ho st/client.json",
        "HTTPS://127.0.0.1:{port}/host/client.json",
        "https://127.0.0.1:99999/host/client.json",
        "asrama-host",
    ],
)
async def test_a_client_id_that_is_no_document_url_is_refused_without_a_connection(url: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        url = url.format(port=listener.getsockname()[1])
        documents = ClientDocuments(allow_loopback=True)
        assert not ClientDocuments.is_document_url(url)
        assert await documents.client(url) is None
        await documents.aclose()
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected


def test_document_urls_per_the_draft() -> None:
    assert ClientDocuments.is_document_url("https://app.example.com/oauth/client.json")
    assert ClientDocuments.is_document_url("https://app.example.com:8443/c?v=1")
    assert ClientDocuments.is_document_url("https://[2001:db8::1]/client")


PRIVATE = ["10.0.0.1", "192.168.1.10", "100.64.0.1", "169.254.169.254", "0.0.0.0", "224.0.0.1", "[fd00::1]"]  # noqa: S104


@pytest.mark.parametrize("host", [*PRIVATE, "[fe80::1]", "[::]", "[::ffff:10.0.0.1]"])
async def test_a_private_address_is_refused_before_any_connection(caplog: pytest.LogCaptureFixture, host: str) -> None:
    documents = ClientDocuments(timeout=30)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        assert await documents.client(f"https://{host}/host/client.json") is None
    await documents.aclose()
    assert reasons(caplog) == ["address not public"]
    assert time.monotonic() - started < 5  # a connection attempt to an unrouted address would wait much longer


@pytest.mark.parametrize("host", ["a..b", "x" * 70 + ".example"])  # no DNS needed: refused while encoding
async def test_a_host_that_does_not_resolve_is_no_client(caplog: pytest.LogCaptureFixture, host: str) -> None:
    documents = ClientDocuments()
    with caplog.at_level(logging.WARNING):
        assert await documents.client(f"https://{host}/host/client.json") is None
    await documents.aclose()
    assert len(caplog.records) == 1


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_loopback_is_refused_unless_allowed(
    served: Any, trust: ssl.SSLContext, caplog: pytest.LogCaptureFixture, host: str
) -> None:
    base, replies, fetched = served
    url = base.replace("127.0.0.1", host) + PATH
    replies[PATH] = Reply(document(url))
    documents = ClientDocuments(verify=trust)
    with caplog.at_level(logging.WARNING):
        assert await documents.client(url) is None
    await documents.aclose()
    assert fetched == []
    assert reasons(caplog) == ["address not public"]


async def test_a_document_is_fetched_once_for_its_ttl(served: Any, trust: ssl.SSLContext, clock: Clock) -> None:
    base, replies, fetched = served
    url = base + PATH
    replies[PATH] = Reply(document(url))
    documents = ClientDocuments(verify=trust, allow_loopback=True, ttl=600, clock=clock)
    first = await documents.client(url)
    clock.now += 599
    assert first is not None
    assert await documents.client(url) == first
    assert fetched == [PATH]
    clock.now += 2
    assert await documents.client(url) == first
    await documents.aclose()
    assert fetched == [PATH, PATH]


async def test_a_failure_is_remembered_briefly(served: Any, trust: ssl.SSLContext, clock: Clock) -> None:
    base, replies, fetched = served
    url = base + PATH
    replies[PATH] = Reply(b"not json")
    documents = ClientDocuments(verify=trust, allow_loopback=True, clock=clock)
    assert await documents.client(url) is None
    clock.now += 29
    assert await documents.client(url) is None
    assert fetched == [PATH]
    replies[PATH] = Reply(document(url))
    clock.now += 2
    assert await documents.client(url) is not None
    await documents.aclose()
    assert fetched == [PATH, PATH]


async def test_a_flood_of_one_url_is_one_fetch(served: Any, trust: ssl.SSLContext) -> None:
    base, replies, fetched = served
    url = base + PATH
    replies[PATH] = Reply(b"not json")
    documents = ClientDocuments(verify=trust, allow_loopback=True)
    results: list[object] = []

    async def ask() -> None:
        results.append(await documents.client(url))

    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(ask)
    await documents.aclose()
    assert results == [None] * 20
    assert fetched == [PATH]


@pytest.mark.parametrize(
    ("cache_control", "ttl", "kept"),
    [("public, max-age=120", 3600, 120), ("max-age=5", 3600, 60), ("no-store", 3600, 3600), ("max-age=900", 300, 300)],
)
async def test_max_age_shortens_the_ttl_to_at_least_a_minute(
    served: Any, trust: ssl.SSLContext, clock: Clock, cache_control: str, ttl: float, kept: float
) -> None:
    base, replies, fetched = served
    url = base + PATH
    replies[PATH] = Reply(document(url), headers={"Content-Type": "application/json", "Cache-Control": cache_control})
    documents = ClientDocuments(verify=trust, allow_loopback=True, ttl=ttl, clock=clock)
    assert await documents.client(url) is not None
    clock.now += kept - 1
    assert await documents.client(url) is not None
    assert len(fetched) == 1
    clock.now += 2
    assert await documents.client(url) is not None
    await documents.aclose()
    assert len(fetched) == 2


async def test_a_server_that_never_answers_is_given_up_on_time(trust: ssl.SSLContext) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts TCP in the kernel, never speaks TLS
        url = f"https://127.0.0.1:{silent.getsockname()[1]}{PATH}"
        documents = ClientDocuments(verify=trust, allow_loopback=True, timeout=0.5)
        started = time.monotonic()
        assert await documents.client(url) is None
        await documents.aclose()
        assert time.monotonic() - started < 3
