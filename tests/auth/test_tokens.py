"""Bearer tokens over real HTTP: `mcp-asrama serve --transport http --auth jwt ...` as a process on 127.0.0.1,
tokens minted here and verified against the stand-in identity provider's JWKS."""

import time
from collections.abc import Callable

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.auth.conftest import Mcp
from tests.auth.idp import Idp, b64url, hmac_signed, new_rsa_key, public_pem, unsigned
from tests.auth.support import ERAS, MODERN, bearer_client, post
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e

NOW = int(time.time())


def _www(response: httpx2.Response) -> str:
    return response.headers.get("www-authenticate", "")


# --- accepted ------------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_valid_token_calls_tools_and_reads_resources_in_each_era(jwt_mcp: Mcp, idp: Idp, era: str) -> None:
    async with bearer_client(jwt_mcp.url, idp.mint(jwt_mcp.public_url), era) as client:
        assert client.protocol_version == (MODERN if era == MODERN else "2025-11-25")
        result = await client.call_tool("absensi_harian", {"tanggal": "2026-10-06"})
        assert not result.is_error
        assert result.structured_content["per_status"]["izin"] == 1
        kamar = await client.read_resource("asrama://kamar")
        assert '"Al-Fatih 1"' in kamar.contents[0].text


@pytest.mark.anyio
async def test_unknown_tool_is_still_invalid_params_with_a_token(jwt_mcp: Mcp, idp: Idp) -> None:
    async with bearer_client(jwt_mcp.url, idp.mint(jwt_mcp.public_url), MODERN) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("nope", {})
    assert raised.value.error.code == -32602


ACCEPTED: dict[str, Callable[[Idp, str], str]] = {
    "expired_within_leeway": lambda idp, aud: idp.mint(aud, exp=int(time.time()) - 10),
    "valid_soon_within_leeway": lambda idp, aud: idp.mint(aud, nbf=int(time.time()) + 10),
    "audience_list_with_ours": lambda idp, aud: idp.mint(["account", aud]),
    "audience_with_trailing_slash": lambda idp, aud: idp.mint(aud + "/"),
    "scope_as_scp_list": lambda idp, aud: idp.mint(aud, scope=None, scp=["asrama:read"]),
    "no_azp_client_is_sub": lambda idp, aud: idp.mint(aud, azp=None),
}


@pytest.mark.parametrize("make", ACCEPTED.values(), ids=ACCEPTED.keys())
@pytest.mark.parametrize("era", ERAS)
def test_accepted_tokens(jwt_mcp: Mcp, idp: Idp, make: Callable[[Idp, str], str], era: str) -> None:
    response = post(jwt_mcp.url, era=era, token=make(idp, jwt_mcp.public_url))
    assert response.status_code == 200, response.text
    assert reply(response)["result"]["tools"][0]["name"] == "cari_anak"


# --- 401 and the metadata it points to -------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("authorization", [None, "", "Bearer", "Basic dXNlcjpwdw==", "Bearer not-a-jwt"])
def test_missing_or_malformed_token_is_401_pointing_to_the_metadata(
    jwt_mcp: Mcp, era: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = post(jwt_mcp.url, era=era, headers=headers)
    assert response.status_code == 401
    www = _www(response)
    assert www.startswith("Bearer ")
    assert 'error="invalid_token"' in www
    assert f'resource_metadata="{jwt_mcp.metadata_url}"' in www
    assert response.json()["error"] == "invalid_token"


def test_protected_resource_metadata_names_the_resource_issuer_and_scope(jwt_mcp: Mcp, idp: Idp) -> None:
    response = httpx2.get(jwt_mcp.metadata_url, timeout=10)  # RFC 9728: no token needed
    assert response.status_code == 200
    assert response.json() == {
        "resource": jwt_mcp.public_url,
        "authorization_servers": [idp.issuer],
        "scopes_supported": ["asrama:read"],
        "bearer_methods_supported": ["header"],
    }


# --- refused tokens --------------------------------------------------------------------------------------------


def _tampered(idp: Idp, aud: str) -> str:
    header, _, signature = idp.mint(aud, asrama_scope=["kamar:Aisyah 2"]).split(".")
    import json

    payload = b64url(json.dumps(idp.claims(aud, asrama_scope=["all"])).encode())
    return f"{header}.{payload}.{signature}"


def _ec_signed_as_k1(idp: Idp, aud: str) -> str:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec

    return jwt.encode(idp.claims(aud), ec.generate_private_key(ec.SECP256R1()), "ES256", headers={"kid": "k1"})


def _no_kid(idp: Idp, aud: str) -> str:
    import jwt

    return jwt.encode(idp.claims(aud), idp.keys["k1"], algorithm="RS256")


REFUSED: dict[str, Callable[[Idp, str], str]] = {
    "expired": lambda idp, aud: idp.mint(aud, iat=NOW - 900, nbf=NOW - 900, exp=int(time.time()) - 120),
    "not_yet_valid": lambda idp, aud: idp.mint(aud, nbf=int(time.time()) + 120),
    "issued_in_the_future": lambda idp, aud: idp.mint(aud, iat=int(time.time()) + 120),
    "wrong_audience": lambda idp, aud: idp.mint("http://127.0.0.1:1/mcp"),
    "audience_of_another_client": lambda idp, aud: idp.mint(["account", "asrama-admin"]),
    "no_audience": lambda idp, aud: idp.mint(aud, aud=None),
    "wrong_issuer": lambda idp, aud: idp.mint(aud, iss=idp.issuer.replace("sekolah", "lain")),
    "no_issuer": lambda idp, aud: idp.mint(aud, iss=None),
    "no_exp": lambda idp, aud: idp.mint(aud, exp=None),
    "no_sub": lambda idp, aud: idp.mint(aud, sub=None),
    "forged_signature": lambda idp, aud: idp.mint(aud, key=new_rsa_key()),
    "tampered_payload": _tampered,
    "alg_none": lambda idp, aud: unsigned({"alg": "none", "typ": "JWT", "kid": "k1"}, idp.claims(aud)),
    "alg_None": lambda idp, aud: unsigned({"alg": "None", "typ": "JWT", "kid": "k1"}, idp.claims(aud)),
    "hs256_keyed_with_the_public_key": lambda idp, aud: hmac_signed(
        {"alg": "HS256", "typ": "JWT", "kid": "k1"}, idp.claims(aud), public_pem(idp.keys["k1"])
    ),
    "es256_header_on_an_rsa_kid": _ec_signed_as_k1,
    "unknown_kid": lambda idp, aud: idp.mint(aud, kid="unpublished", key=new_rsa_key()),
    "no_kid": _no_kid,
    "not_a_jwt": lambda idp, aud: "abc.def.ghi",
    "huge": lambda idp, aud: "a" * 20_000,
}


@pytest.mark.parametrize("make", REFUSED.values(), ids=REFUSED.keys())
def test_refused_tokens_are_401(jwt_mcp: Mcp, idp: Idp, make: Callable[[Idp, str], str]) -> None:
    response = post(jwt_mcp.url, token=make(idp, jwt_mcp.public_url))
    assert response.status_code == 401, response.text
    assert 'error="invalid_token"' in _www(response)


@pytest.mark.parametrize("era", ERAS)
def test_refused_token_gets_no_data_in_either_era(jwt_mcp: Mcp, idp: Idp, era: str) -> None:
    token = idp.mint(jwt_mcp.public_url, exp=int(time.time()) - 120)
    response = post(
        jwt_mcp.url, "tools/call", {"name": "cari_anak", "arguments": {"kelas": "7A"}}, era=era, token=token
    )
    assert response.status_code == 401
    assert "Ahmad" not in response.text and "A001" not in response.text


@pytest.mark.parametrize("era", ERAS)
def test_token_without_the_required_scope_is_403_insufficient_scope(jwt_mcp: Mcp, idp: Idp, era: str) -> None:
    token = idp.mint(jwt_mcp.public_url, scope="openid profile email")
    response = post(
        jwt_mcp.url, "tools/call", {"name": "cari_anak", "arguments": {"kelas": "7A"}}, era=era, token=token
    )
    assert response.status_code == 403
    www = _www(response)
    assert 'error="insufficient_scope"' in www
    assert f'resource_metadata="{jwt_mcp.metadata_url}"' in www
    assert response.json()["error"] == "insufficient_scope"
    assert "Ahmad" not in response.text


def test_server_log_never_holds_a_token(jwt_mcp: Mcp, idp: Idp) -> None:
    accepted = idp.mint(jwt_mcp.public_url)
    refused = idp.mint(jwt_mcp.public_url, exp=int(time.time()) - 120)
    assert post(jwt_mcp.url, token=accepted).status_code == 200
    assert post(jwt_mcp.url, token=refused).status_code == 401
    assert jwt_mcp.log is not None
    log = jwt_mcp.log.read_text()
    assert "bearer token refused" in log  # the log is DEBUG-verbose, and still:
    for token in (accepted, refused):
        for part in token.split("."):
            assert part not in log
