"""Where the signing keys come from, over real HTTP: key rotation at the identity provider (one refetch for an
unknown `kid`, rate-limited), and a public key file instead of a JWKS URL."""

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.auth.conftest import Mcp, jwt_settings, mcp_in_thread, mcp_process
from tests.auth.idp import Idp, new_rsa_key, public_pem
from tests.auth.support import ERAS, TIMEOUT, post
from tests.conftest import TOKEN
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e


def test_rotated_key_is_fetched_once_and_made_up_kids_cannot_hammer_the_idp(service_url: str) -> None:
    with Idp() as idp:
        idp.add_key("k1")
        with mcp_in_thread(api_url=service_url, **jwt_settings(idp)) as mcp:
            assert post(mcp.url, token=idp.mint(mcp.public_url)).status_code == 200
            assert idp.jwks_requests == 1
            assert post(mcp.url, token=idp.mint(mcp.public_url)).status_code == 200
            assert idp.jwks_requests == 1  # cached

            idp.add_key("k2")  # the IdP rotates: tokens are now signed with k2
            assert post(mcp.url, token=idp.mint(mcp.public_url, kid="k2")).status_code == 200
            assert idp.jwks_requests == 2  # one refetch for the unknown kid

            for _ in range(25):  # a flood of made-up kids, as an attacker would send
                forged = idp.mint(mcp.public_url, kid=uuid.uuid4().hex, key=new_rsa_key())
                assert post(mcp.url, token=forged).status_code == 401
            assert idp.jwks_requests == 2  # within the cooldown: no refetch at all

            for kid in ("k1", "k2"):
                assert post(mcp.url, token=idp.mint(mcp.public_url, kid=kid)).status_code == 200


def test_unpublished_key_stays_refused_after_its_refetch(service_url: str) -> None:
    with Idp() as idp:
        idp.add_key("k1")
        idp.add_key("k-next", publish=False)  # signing with a key the IdP has not published yet
        with mcp_in_thread(api_url=service_url, **jwt_settings(idp)) as mcp:
            assert post(mcp.url, token=idp.mint(mcp.public_url, kid="k-next")).status_code == 401
            assert idp.jwks_requests == 1  # the first fetch already looked for it; the refetch shares it


def test_idp_down_at_start_refuses_tokens_without_a_5xx(service_url: str) -> None:
    with Idp() as idp:
        idp.add_key("k1")
    # the IdP has stopped: its JWKS URL refuses connections
    with mcp_in_thread(api_url=service_url, **jwt_settings(idp)) as mcp:
        response = post(mcp.url, token=idp.mint(mcp.public_url))
        assert response.status_code == 401
        assert httpx2.get(mcp.base + "/healthz", timeout=TIMEOUT).status_code == 200


# --- a public key file instead of a JWKS URL ----------------------------------------------------------------


@pytest.fixture(scope="module")
def pem_mcp(idp: Idp, service_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    """The server process with --auth-public-key-file (no JWKS URL at all)."""
    folder = tmp_path_factory.mktemp("pem")
    key_file = folder / "idp-public.pem"
    key_file.write_bytes(public_pem(idp.keys["k1"]))
    from tests.e2e.conftest import free_port

    port = free_port()
    flags = [
        "--auth", "jwt",
        "--public-url", f"http://127.0.0.1:{port}/mcp",
        "--auth-issuer", idp.issuer,
        "--auth-public-key-file", str(key_file),
    ]  # fmt: skip
    env = {"ASRAMA_API_URL": service_url, "ASRAMA_API_TOKEN": TOKEN}
    with mcp_process(flags, env, folder, port) as mcp:
        yield mcp


@pytest.mark.parametrize("era", ERAS)
def test_public_key_file_mode_accepts_tokens_of_that_key(pem_mcp: Mcp, idp: Idp, era: str) -> None:
    before = idp.jwks_requests
    response = post(
        pem_mcp.url, "tools/call", {"name": "detail_anak", "arguments": {"id_anak": "A001"}}, era=era,
        token=idp.mint(pem_mcp.public_url, kid="whatever", key=idp.keys["k1"]),
    )  # fmt: skip
    assert response.status_code == 200
    assert reply(response)["result"]["structuredContent"]["nama"] == "Ahmad Fauzi"
    assert idp.jwks_requests == before  # the JWKS URL is never asked


@pytest.mark.parametrize("era", ERAS)
def test_public_key_file_mode_refuses_other_keys_and_tricks(pem_mcp: Mcp, idp: Idp, era: str) -> None:
    from tests.auth.idp import hmac_signed, unsigned

    claims = idp.claims(pem_mcp.public_url)
    for token in (
        idp.mint(pem_mcp.public_url, key=new_rsa_key()),
        unsigned({"alg": "none", "typ": "JWT"}, claims),
        hmac_signed({"alg": "HS256", "typ": "JWT"}, claims, public_pem(idp.keys["k1"])),
        idp.mint("http://127.0.0.1:1/mcp"),
    ):
        assert post(pem_mcp.url, era=era, token=token).status_code == 401


def test_public_key_file_may_be_a_certificate(idp: Idp, tmp_path: Path, service_url: str) -> None:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    key = idp.keys["k1"]
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sekolah")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    path = tmp_path / "realm.crt"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    settings = jwt_settings(idp, auth_jwks_url=None, auth_public_key_file=path)
    with mcp_in_thread(api_url=service_url, **settings) as mcp:
        assert post(mcp.url, token=idp.mint(mcp.public_url)).status_code == 200
