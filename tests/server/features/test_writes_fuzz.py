"""A Hypothesis fuzz pass over the write tools: whatever the model sends and whatever the person answers, in
either era, nothing is ever written without an accepted, ticked confirmation — or, on a host that renders the
confirm view, without a `setuju` sent with the usulan's own id and key — checked against the database after every
call; every answer is a clean result or a protocol error."""

from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult
from sqlalchemy import func, select

from mcp_asrama.server.features.write import META
from mcp_asrama.service.db import make_engine
from mcp_asrama.service.models import Absensi, Izin, RiwayatAbsensi
from tests.server.conftest import ERAS, server_for
from tests.server.test_views import AppsHost


def mostly(valid: list[Any], hostile: list[Any]) -> st.SearchStrategy[Any]:
    """Valid values seven times in eight (so that many calls reach the question), hostile ones otherwise."""
    return st.sampled_from([*valid * 7, *hostile])


IDS = mostly(["A001", "A002", "A003"], ["X404", "../A001", "A001\x00", "", "A" * 70])
DATES = mostly(["2026-10-06", "2026-10-21", "2026-10-22"], ["2026-02-30", "kemarin", "2026-10-21T00:00", 20261021])
STATUSES = mostly(["hadir", "izin", "sakit", "alpa"], ["pulang", "HADIR", "", None])
NOTES = st.one_of(mostly([None, "Demam", "Dijemput ayah"], ["a\nb", "x" * 600, "' OR 1=1 --"]), st.text(max_size=30))
ROWS = st.fixed_dictionaries({"id_anak": IDS, "status": STATUSES}, optional={"keterangan": NOTES})
ROOMS = mostly([None, "Al-Fatih 1", "al-fatih 1", "Aisyah 2"], ["Tidak Ada", "x" * 150])
CALLS = st.one_of(
    st.tuples(
        st.just("catat_absensi"),
        st.fixed_dictionaries(
            {"tanggal": DATES, "entri": st.lists(ROWS, max_size=4)},
            optional={"kamar": ROOMS, "kelas": mostly([None, "7A", "8B"], ["9Z"]), "yang_lain": STATUSES},
        ),
    ),
    st.tuples(
        st.just("ajukan_izin"),
        st.fixed_dictionaries(
            {
                "id_anak": IDS,
                "dari": DATES,
                "sampai": DATES,
                "jenis": mostly(["pulang", "sakit", "keperluan"], ["liburan"]),
                "alasan": NOTES,
            }
        ),
    ),
    st.tuples(
        st.just("akhiri_izin"),
        st.fixed_dictionaries(
            {"id_izin": st.sampled_from(["tidak-ada", "../x", "A" * 70, ""]), "tanggal_kembali": DATES}
        ),
    ),
)
ANSWERS = st.lists(
    st.sampled_from(
        [
            ("accept", {"setuju": True}),
            ("accept", {"setuju": False}),
            ("accept", {"setuju": "ya"}),
            ("accept", {}),
            ("decline", None),
            ("cancel", None),
        ]
    ),
    min_size=1,
    max_size=3,
)


def written(db_url: str) -> tuple[int, int, int]:
    """Rows that any write leaves behind: records, their history, izin."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            return tuple(  # type: ignore[return-value]
                int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                for t in (Absensi, RiwayatAbsensi, Izin)
            )
    finally:
        engine.dispose()


def clean(outcome: Any) -> bool:
    """Check that `outcome` is a protocol error of ours or a result without a trace; whether it is a result."""
    if isinstance(outcome, MCPError):
        assert outcome.error.code in (-32602, -32600, -32603), outcome.error
        return False
    text = outcome.content[0].text
    assert "Traceback" not in text and "Error executing tool" not in text
    return True


async def one_call(app: FastAPI, era: str, name: str, arguments: Any, answers: list[Any]) -> tuple[bool, Any]:
    """(whether the person accepted with the box ticked at least once, the result or the protocol error)."""
    given_answers = list(answers)
    ticked = False

    async def person(_ctx: Any, _params: Any) -> ElicitResult:
        nonlocal ticked
        action, content = given_answers.pop(0) if given_answers else ("decline", None)
        ticked = ticked or (action == "accept" and content == {"setuju": True})
        return ElicitResult(action=action, content=content)

    async with Client(server_for(app, writes=True), mode=era, cache=None, elicitation_callback=person) as client:
        try:
            outcome: Any = await client.call_tool(name, arguments)
        except MCPError as exc:
            outcome = exc
    return ticked, outcome


@pytest.mark.parametrize("era", ERAS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=CALLS, answers=ANSWERS)
def test_nothing_is_written_without_an_accepted_confirmation(
    service_app: FastAPI, school_db: str, era: str, call: tuple[str, Any], answers: list[Any]
) -> None:
    name, arguments = call
    before = written(school_db)
    ticked, outcome = anyio.run(one_call, service_app, era, name, arguments, answers)
    after = written(school_db)
    if not clean(outcome):
        assert after == before
        return
    text = outcome.content[0].text
    wrote = (outcome.structured_content or {}).get("hasil") == "ditulis"
    if after != before:
        assert ticked and wrote and not outcome.is_error, (name, arguments, answers, text)
    if wrote:
        assert ticked
    event(f"{name}: {'written' if wrote else 'tool error' if outcome.is_error else 'not written'}")


# --- the same, when the person decides on the confirm view (issue 20) -----------------------------------------------

DECISIONS = st.lists(
    st.tuples(
        mostly(["real"], ["guessed", "other"]),  # the usulan's id
        mostly(["real"], ["guessed", "empty"]),  # its key
        mostly(["setuju", "tolak"], ["ya"]),
    ),
    max_size=3,
)


async def one_view_call(app: FastAPI, era: str, name: str, arguments: Any, decisions: list[Any]) -> tuple[bool, Any]:
    """(whether a decision of the person's view — the usulan's own id and key, setuju — went out, the last
    result or protocol error), for a host that renders views and shows no form."""
    chosen = False
    async with Client(server_for(app, writes=True), mode=era, cache=None, extensions=[AppsHost()]) as client:
        try:
            outcome: Any = await client.call_tool(name, arguments)
            usulan = (outcome.meta or {}).get(META)
            for id_kind, key_kind, keputusan in decisions if usulan else []:
                ids = {"real": usulan["id"], "guessed": "G" * 24, "other": "A001-usulan-lain"}
                keys = {"real": usulan["kunci"], "guessed": "K" * 24, "empty": ""}
                chosen = chosen or (id_kind, key_kind, keputusan) == ("real", "real", "setuju")
                outcome = await client.call_tool(
                    "putuskan_usulan", {"id_usulan": ids[id_kind], "kunci": keys[key_kind], "keputusan": keputusan}
                )
        except MCPError as exc:
            outcome = exc
    return chosen, outcome


@pytest.mark.parametrize("era", ERAS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=CALLS, decisions=DECISIONS)
def test_nothing_is_written_without_the_persons_decision_on_the_view(
    service_app: FastAPI, school_db: str, era: str, call: tuple[str, Any], decisions: list[Any]
) -> None:
    name, arguments = call
    before = written(school_db)
    chosen, outcome = anyio.run(one_view_call, service_app, era, name, arguments, decisions)
    after = written(school_db)
    clean(outcome)
    if after != before:
        assert chosen, (name, arguments, decisions)
    event(f"{name}: {'written' if after != before else 'nothing written'}")
