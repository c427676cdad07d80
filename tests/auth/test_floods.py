"""Over real HTTP: a flood of bad or missing tokens is refused cheaply — each token verified once, refusals logged
aggregated, requests without a valid token bucketed per client address."""

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.auth.conftest import Mcp, mcp_process
from tests.auth.idp import Idp, new_rsa_key
from tests.auth.support import post
from tests.conftest import TOKEN
from tests.e2e.conftest import free_port

pytestmark = pytest.mark.e2e

FLOOD = 40


def jwt_flags(idp: Idp, public_url: str) -> list[str]:
    return ["--auth", "jwt", "--public-url", public_url, "--auth-issuer", idp.issuer, "--auth-jwks-url", idp.jwks_url]


@pytest.fixture
def limited_mcp(idp: Idp, service_url: str, tmp_path: Path) -> Iterator[Mcp]:
    """A JWT server whose buckets hold 5 requests and refill slowly."""
    port = free_port()
    env = {
        "ASRAMA_API_URL": service_url,
        "ASRAMA_API_TOKEN": TOKEN,
        "ASRAMA_RATE_LIMIT": "6/min",
        "ASRAMA_RATE_BURST": "5",
    }
    with mcp_process(jwt_flags(idp, f"http://127.0.0.1:{port}/mcp"), env, tmp_path, port) as mcp:
        yield mcp


def lines(mcp: Mcp, text: str) -> list[str]:
    assert mcp.log is not None
    return [line for line in mcp.log.read_text().splitlines() if text in line]


def test_a_flood_repeating_a_bad_token_is_verified_and_logged_once(jwt_mcp: Mcp, idp: Idp) -> None:
    forged = idp.mint(jwt_mcp.public_url, key=new_rsa_key())  # kid k1, signed with another key
    before = len(lines(jwt_mcp, "bearer token refused"))
    for _ in range(FLOOD):
        assert post(jwt_mcp.url, "resources/read", {"uri": "asrama://kamar"}, token=forged).status_code == 401
    assert len(lines(jwt_mcp, "bearer token refused")) - before <= 1  # was two lines per request
    for part in forged.split("."):
        assert part not in "\n".join(lines(jwt_mcp, "refused"))


def test_a_flood_of_ever_new_bad_tokens_is_logged_aggregated(jwt_mcp: Mcp, idp: Idp) -> None:
    before = len(lines(jwt_mcp, "bearer token refused"))
    for i in range(FLOOD):
        token = idp.mint(jwt_mcp.public_url, key=new_rsa_key(), jti=f"flood-{i}")
        assert post(jwt_mcp.url, token=token).status_code == 401
    assert len(lines(jwt_mcp, "bearer token refused")) - before <= 1


def test_requests_without_a_valid_token_are_bucketed_per_client_address(limited_mcp: Mcp, idp: Idp) -> None:
    statuses = [post(limited_mcp.url, "resources/read", {"uri": "asrama://kamar"}).status_code for _ in range(FLOOD)]
    assert statuses[:5] == [401] * 5
    assert set(statuses[5:]) == {429}
    refused = post(limited_mcp.url, "tools/list", token="not-a-jwt")
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert len(lines(limited_mcp, "rate limited")) <= 1  # refusals logged once a minute per subject
    valid = idp.mint(limited_mcp.public_url)
    assert post(limited_mcp.url, "resources/read", {"uri": "asrama://kamar"}, token=valid).status_code == 200


def test_a_flood_of_free_requests_does_not_fill_the_log(jwt_mcp: Mcp, idp: Idp) -> None:
    """`tools/list` and `ping` wrote one access line each (19.8 MB per 100k); now they are counted, a line per
    interval, while a read still gets its own line."""
    token = idp.mint(jwt_mcp.public_url)
    before = len(lines(jwt_mcp, '"POST /mcp 200"'))
    for method in ("tools/list", "ping") * (FLOOD // 2):
        assert post(jwt_mcp.url, method, token=token).status_code == 200
    assert len(lines(jwt_mcp, '"POST /mcp 200"')) == before
    assert 1 <= len(lines(jwt_mcp, "routine requests")) <= 2
    assert post(jwt_mcp.url, "resources/read", {"uri": "asrama://kamar"}, token=token).status_code == 200
    deadline = time.monotonic() + 5  # the line is written once the answer has gone out
    while len(lines(jwt_mcp, '"POST /mcp 200"')) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(lines(jwt_mcp, '"POST /mcp 200"')) == before + 1


def test_free_requests_are_metered_in_a_larger_window(limited_mcp: Mcp, idp: Idp) -> None:
    """A burst of 5 for reads, 50 for free requests (10 times): a flood of them is refused, reads keep theirs."""
    token = idp.mint(limited_mcp.public_url)
    statuses = [post(limited_mcp.url, "tools/list", token=token).status_code for _ in range(60)]
    assert statuses[:50] == [200] * 50
    assert set(statuses[50:]) == {429}
    assert post(limited_mcp.url, "resources/read", {"uri": "asrama://kamar"}, token=token).status_code == 200
