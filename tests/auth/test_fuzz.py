"""A Hypothesis fuzz pass over every tool's arguments, through real HTTP with a real token: whatever the model
sends, no crash, no HTTP 5xx, a well-formed answer, and no personal value in it."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.auth.conftest import Mcp, jwt_settings, mcp_in_thread
from tests.auth.idp import Idp
from tests.auth.support import post
from tests.conftest import TUTORIAL_ANAK
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e

PERSONAL = [str(a[field]) for a in TUTORIAL_ANAK for field in ("nik", "no_hp_wali", "alamat", "tanggal_lahir")]
TOOLS = {
    "cari_anak": ["nama", "kelas", "kamar", "status", "limit", "offset"],
    "detail_anak": ["id_anak"],
    "daftar_kamar": [],
    "absensi_harian": ["tanggal", "kelas", "kamar", "status"],
    "rekap_absensi": ["dari", "sampai", "kelas", "kamar", "id_anak"],
}
HOSTILE = st.sampled_from(
    ["../kamar", "A001?x=1", "%2e%2e/kamar", "..", "A001\x00", "' OR 1=1 --", '"}{', "2026-02-30", "9" * 400, "7A"]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=80),
    HOSTILE,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from(sorted(TOOLS)))
    keys = st.sampled_from(TOOLS[name]) if TOOLS[name] else st.text(min_size=1, max_size=10)
    arguments = draw(st.dictionaries(keys | st.text(min_size=1, max_size=10), VALUES, max_size=5))
    return name, draw(st.one_of(st.just(arguments), VALUES)) if draw(st.integers(0, 9)) == 0 else arguments


@pytest.fixture(scope="module")
def fuzz_target(idp: Idp, service_url: str) -> Iterator[tuple[Mcp, str]]:
    with mcp_in_thread(**jwt_settings(idp, api_url=service_url)) as mcp:
        yield mcp, idp.mint(mcp.public_url, asrama_scope=["all"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=tool_calls())
def test_any_arguments_get_a_clean_answer_without_personal_data(
    fuzz_target: tuple[Mcp, str], call: tuple[str, Any]
) -> None:
    mcp, token = fuzz_target
    name, arguments = call
    response = post(mcp.url, "tools/call", {"name": name, "arguments": arguments}, token=token)
    assert response.status_code < 500, response.text
    body = reply(response)
    assert ("result" in body) != ("error" in body), body
    if "result" in body:
        result = body["result"]
        assert isinstance(result["isError"], bool)
        text = result["content"][0]["text"]
        assert "Traceback" not in text and "Error executing tool" not in text
    dump = json.dumps(body, ensure_ascii=False)
    for value in PERSONAL:
        assert value not in dump
