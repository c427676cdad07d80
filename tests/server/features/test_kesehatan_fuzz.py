"""A Hypothesis pass over the health allowlist: for any principal without `peran:kesehatan` (musyrif, wali kelas,
bk, office, none), any tool, resource or prompt with any arguments — writes on, every confirmation declined — no
health value (keluhan, tindakan, obat, rujukan, petugas) of any student is in any output, even from an upstream that
puts them into every answer about clinic visits (and into its counts-only summary), nor from the real service."""

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from tests.server.conftest import ERAS, server_for
from tests.server.support import leaky_upstream
from tests.server.support_records import HEALTH, SECRET_VALUES, seed_kesehatan

SCOPES = st.sampled_from(
    [["kamar:Aisyah 2"], ["kamar:Al-Fatih 1"], ["kelas:7A"], ["kelas:8B", "peran:bk"], ["peran:bk"], ["all"],
     ["all", "peran:bk"], [], ["all", "peran:dokter"], ["all", "peran:Kesehatan"], ["all", "peran: kesehatan"]]
)  # fmt: skip
IDS = st.sampled_from(["A001", "A002", "A003", "X999", "../A001", ""])
DATES = st.sampled_from(["2026-10-01", "2026-10-06", "2026-10-31", "2026-02-30", "kemarin"])
ROOMS = st.sampled_from([None, "7A", "8B", "Al-Fatih 1", "aisyah 2", "Tidak Ada"])
OPTIONAL = {"kelas": ROOMS, "kamar": ROOMS}
TEXT = st.sampled_from(["pusing", "obat-rahasia-A001", "demam", ""])
TOOL_CALLS = st.one_of(
    st.tuples(
        st.just("kesehatan_anak"), st.fixed_dictionaries({"id_anak": IDS}, optional={"dari": DATES, "sampai": DATES})
    ),
    st.tuples(st.just("rekap_kesehatan"), st.fixed_dictionaries({"dari": DATES, "sampai": DATES}, optional=OPTIONAL)),
    st.tuples(st.just("pelanggaran_anak"), st.fixed_dictionaries({"id_anak": IDS})),
    st.tuples(st.just("rekap_pelanggaran"), st.fixed_dictionaries({"dari": DATES, "sampai": DATES}, optional=OPTIONAL)),
    st.tuples(st.just("hafalan_anak"), st.fixed_dictionaries({"id_anak": IDS})),
    st.tuples(st.just("progres_hafalan"), st.fixed_dictionaries({}, optional=OPTIONAL)),
    st.tuples(st.just("detail_anak"), st.fixed_dictionaries({"id_anak": IDS})),
    st.tuples(st.just("cari_anak"), st.fixed_dictionaries({}, optional=OPTIONAL)),
    st.tuples(st.just("absensi_harian"), st.fixed_dictionaries({"tanggal": DATES})),
    st.tuples(
        st.just("rekap_absensi"), st.fixed_dictionaries({"dari": DATES, "sampai": DATES}, optional={"id_anak": IDS})
    ),
    st.tuples(
        st.just("catat_kunjungan_klinik"),
        st.fixed_dictionaries(
            {"id_anak": IDS, "tanggal": DATES, "keluhan": TEXT, "kategori": st.just("demam")}, optional={"obat": TEXT}
        ),
    ),
    st.tuples(
        st.just("catat_pelanggaran"),
        st.fixed_dictionaries({"id_anak": IDS, "tanggal": DATES, "jenis": st.just("membawa_hp")}),
    ),
)
URIS = st.builds(lambda i, kind: f"asrama://anak/{i}{kind}", IDS, st.sampled_from(["", "/hafalan", "/pelanggaran"]))
PROMPTS = st.one_of(
    st.tuples(st.just("laporan_bulanan_wali"), st.fixed_dictionaries({"id_anak": IDS, "bulan": st.just("2026-10")})),
    st.tuples(
        st.just("rapat_wali_kelas"),
        st.fixed_dictionaries({"kelas": st.sampled_from(["7A", "8B"]), "bulan": st.just("2026-10")}),
    ),
)
REQUESTS = st.lists(
    st.one_of(
        st.tuples(st.just("tool"), TOOL_CALLS),
        st.tuples(st.just("resource"), URIS),
        st.tuples(st.just("prompt"), PROMPTS),
    ),
    min_size=1,
    max_size=6,
)


async def outputs_of(era: str, scope: list[str], requests: list[Any], app: Any = None) -> list[str]:
    """The full serialized answer (or protocol error) of each request, and the tool list; from `app` (the leaky
    upstream by default)."""

    async def decline(_ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    server = server_for(app or leaky_upstream(), stdio_scope=scope, writes=True)
    outputs: list[str] = []
    async with Client(server, mode=era, cache=None, elicitation_callback=decline) as client:
        outputs.append((await client.list_tools()).model_dump_json())
        for kind, request in requests:
            try:
                if kind == "tool":
                    outputs.append((await client.call_tool(*request)).model_dump_json())
                elif kind == "resource":
                    outputs.append((await client.read_resource(request)).model_dump_json())
                else:
                    outputs.append((await client.get_prompt(*request)).model_dump_json())
            except MCPError as exc:
                outputs.append(exc.error.model_dump_json())
    return outputs


@pytest.mark.parametrize("era", ERAS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scope=SCOPES, requests=REQUESTS)
def test_no_health_value_reaches_a_principal_without_the_clinic_role(
    era: str, scope: list[str], requests: list[Any]
) -> None:
    outputs = anyio.run(outputs_of, era, scope, requests)
    asked = {value for kind, request in requests if kind == "tool" for value in request[1].values()}
    leaked = [(v, o[:160]) for o in outputs for v in HEALTH - asked if v in o]
    assert leaked == [], (scope, requests)
    assert '"name":"catat_kunjungan_klinik"' not in outputs[0]
    event(f"{len(requests)} requests")


@pytest.fixture
def clinic_data(service_app: Any) -> Any:
    """The real service with two clinic visits (every detail filled in)."""
    anyio.run(seed_kesehatan, service_app)
    return service_app


@pytest.mark.parametrize("era", ERAS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=SCOPES, requests=REQUESTS)
def test_no_health_value_from_the_real_service_reaches_a_principal_without_the_clinic_role(
    clinic_data: Any, era: str, scope: list[str], requests: list[Any]
) -> None:
    outputs = anyio.run(outputs_of, era, scope, requests, clinic_data)
    assert [(v, o[:160]) for o in outputs for v in SECRET_VALUES if v in o] == [], (scope, requests)
