"""A Hypothesis pass over the record-adding write tools of issue 10 (violations, deposits, clinic visits) against
the real data service: whatever the model sends and whatever the person answers, in either era, nothing is written
without an accepted, ticked confirmation (counted through the service's own lists after every call), and every
answer is a clean result or a protocol error."""

from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from tests.conftest import service_client
from tests.server.conftest import ERAS, server_for
from tests.server.features.test_writes_fuzz import ANSWERS, mostly
from tests.server.support_records import CLINIC

IDS = mostly(["A001", "A002", "A003"], ["X404", "../A001", "", "A" * 70])
DATES = mostly(["2026-10-06", "2026-10-21"], ["2026-02-30", "2999-01-01", "kemarin", 20261021])
TEXT = st.one_of(mostly(["demam", "pusing sejak pagi"], ["a\nb", "x" * 600, ""]), st.text(max_size=20))
CALLS = st.one_of(
    st.tuples(
        st.just("catat_setoran_hafalan"),
        st.fixed_dictionaries(
            {
                "id_anak": IDS,
                "tanggal": DATES,
                "jenis": mostly(["ziyadah", "murajaah"], ["hafalan"]),
                "surah": mostly([1, 67, "Al-Baqarah", "yasin"], [0, 115, "Surat Entah", None]),
                "ayat_mulai": mostly([1, 5], [0, -1, 300]),
                "ayat_selesai": mostly([7, 10], [2, 287, 1000]),
            },
            optional={"nilai": mostly([80], [-1, 101]), "penguji": TEXT},
        ),
    ),
    st.tuples(
        st.just("catat_pelanggaran"),
        st.fixed_dictionaries(
            {"id_anak": IDS, "tanggal": DATES, "jenis": mostly(["membawa_hp", "terlambat_sholat"], ["terbang", ""])},
            optional={"keterangan": TEXT, "poin": mostly([None, 10], [-5, 5000])},
        ),
    ),
    st.tuples(
        st.just("catat_kunjungan_klinik"),
        st.fixed_dictionaries(
            {"id_anak": IDS, "tanggal": DATES, "keluhan": TEXT, "kategori": mostly(["demam", "kulit"], ["flu"])},
            optional={"tindakan": TEXT, "obat": TEXT, "rujukan": TEXT, "petugas": TEXT},
        ),
    ),
)
SCOPES = st.sampled_from([CLINIC, ["all"], ["kamar:Aisyah 2"], ["kelas:7A", "peran:kesehatan"]])


async def counts(app: FastAPI) -> tuple[int, int, int]:
    async with service_client(app) as rest:
        paths = ("/pelanggaran", "/hafalan", "/kesehatan")
        return tuple([(await rest.get(path)).json()["total"] for path in paths])  # type: ignore[return-value]


async def one_call(app: FastAPI, era: str, scope: list[str], call: Any, answers: list[Any]) -> tuple[bool, Any, Any]:
    given_answers, ticked = list(answers), False

    async def person(_ctx: Any, _params: Any) -> ElicitResult:
        nonlocal ticked
        action, content = given_answers.pop(0) if given_answers else ("decline", None)
        ticked = ticked or (action == "accept" and content == {"setuju": True})
        return ElicitResult(action=action, content=content)

    before = await counts(app)
    server = server_for(app, writes=True, stdio_scope=scope)
    async with Client(server, mode=era, cache=None, elicitation_callback=person) as client:
        try:
            outcome: Any = await client.call_tool(*call)
        except MCPError as exc:
            outcome = exc
    return ticked, outcome, (before, await counts(app))


@pytest.mark.parametrize("era", ERAS)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=SCOPES, call=CALLS, answers=ANSWERS)
def test_no_record_is_added_without_an_accepted_confirmation(
    service_app: FastAPI, era: str, scope: list[str], call: Any, answers: list[Any]
) -> None:
    ticked, outcome, (before, after) = anyio.run(one_call, service_app, era, scope, call, answers)
    if isinstance(outcome, MCPError):
        assert outcome.error.code in (-32602, -32600, -32603) and after == before
        return
    text = outcome.content[0].text
    assert "Traceback" not in text and "Error executing tool" not in text
    wrote = (outcome.structured_content or {}).get("hasil") == "ditulis"
    assert after == before or (ticked and wrote and not outcome.is_error), (scope, call, answers, text)
    assert after != before or not wrote
    if call[0] == "catat_kunjungan_klinik" and "peran:kesehatan" not in scope:
        assert after == before
    event(f"{call[0]}: {'written' if wrote else 'tool error' if outcome.is_error else 'not written'}")
