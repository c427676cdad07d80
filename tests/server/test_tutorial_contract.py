"""Against a bare tutorial-contract service (the tutorial's mock, served as a fake upstream), the server works where
the contract allows and says plainly what is missing where it does not, rather than guess."""

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from mcp_asrama.server.features import anak_reads
from tests.server.conftest import connect, server_for
from tests.server.support import Recording, call_error, call_ok, leaky_upstream, tutorial_upstream

pytestmark = pytest.mark.anyio


@pytest.fixture
def upstream() -> Recording:
    return Recording(tutorial_upstream())


@pytest.fixture
async def bare(upstream: Recording, era: str) -> AsyncIterator[Client]:
    async with connect(server_for(upstream), era) as client:
        yield client


async def test_absensi_harian_without_filter_works_and_notes_the_missing_names(bare: Client) -> None:
    body = await call_ok(bare, "absensi_harian", {"tanggal": "2026-10-06"})
    assert body["jumlah_anak"] == 3
    assert body["per_status"] == {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 0}
    assert body["tidak_hadir"] == [{"id_anak": "A003", "status": "izin", "keterangan": "Pulang, acara keluarga"}]
    assert "nama/kelas/kamar" in body["catatan"]
    assert "detail_anak" in body["catatan"]


@pytest.mark.parametrize(("field", "value"), [("kelas", "7A"), ("kamar", "Aisyah 2")])
async def test_absensi_harian_filter_the_service_cannot_apply_is_a_clear_error(
    bare: Client, field: str, value: str
) -> None:
    text = await call_error(bare, "absensi_harian", {"tanggal": "2026-10-06", field: value})
    assert f"tidak menyertakan {field}" in text
    assert f"cari_anak({field}=" in text


async def test_absensi_harian_status_filter_works_without_the_service(bare: Client) -> None:
    body = await call_ok(bare, "absensi_harian", {"tanggal": "2026-10-06", "status": "hadir"})
    assert sorted(r["id_anak"] for r in body["tidak_hadir"]) == ["A001", "A002"]


async def test_absensi_harian_names_the_students_without_a_record_from_the_student_list(
    bare: Client, upstream: Recording
) -> None:
    body = await call_ok(bare, "absensi_harian", {"tanggal": "2026-10-07"})
    assert body["jumlah_anak"] == (await call_ok(bare, "cari_anak", {}))["total"] == 3
    assert body["per_status"] == {"hadir": 1, "izin": 0, "sakit": 0, "alpa": 1, "belum_dicatat": 1}
    assert body["tidak_hadir"] == [
        {"id_anak": "A002", "status": "alpa"},
        {"id_anak": "A003", "status": "belum_dicatat", "nama": "Citra Lestari", "kelas": "7A", "kamar": "Aisyah 2"},
    ]
    assert upstream.paths[:2] == [b"/absensi", b"/anak"]
    only = await call_ok(bare, "absensi_harian", {"tanggal": "2026-10-07", "status": "belum_dicatat"})
    assert [r["id_anak"] for r in only["tidak_hadir"]] == ["A003"]


async def test_absensi_harian_does_not_guess_when_the_service_cannot_list_every_student(era: str) -> None:
    # 150 more students: more than one page, and the tutorial's /anak ignores offset (its pages repeat).
    extra = [{"id": f"T{i:03d}", "nama": f"Santri {i:03d}", "kelas": "9A", "kamar": "Al-Fatih 1"} for i in range(150)]
    upstream = Recording(tutorial_upstream(extra))
    async with connect(server_for(upstream), era) as client:
        body = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06"})
    assert body["jumlah_anak"] == 3
    assert body["per_status"] == {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0}
    assert [r["id_anak"] for r in body["tidak_hadir"]] == ["A003"]
    assert "tidak bisa mendaftar semua anak" in body["catatan"]
    assert "belum dicatat tidak dihitung" in body["catatan"]
    assert upstream.paths == [b"/absensi", b"/anak", b"/anak"]


async def test_listing_the_students_of_a_day_is_bounded(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A service that pages properly but lacks `semua_anak`, with a bound of two students (one per page).
    monkeypatch.setattr(anak_reads, "PAGE", 1)
    monkeypatch.setattr(anak_reads, "MAX_SCOPED_ROWS", 2)
    upstream = Recording(leaky_upstream())
    async with connect(server_for(upstream), era) as client:
        body = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06"})
    assert "belum_dicatat" not in body["per_status"]
    assert "tidak bisa mendaftar semua anak" in body["catatan"]
    assert upstream.paths == [b"/absensi", b"/anak", b"/anak"]


async def test_rekap_absensi_says_the_service_lacks_it(bare: Client, upstream: Recording) -> None:
    text = await call_error(bare, "rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31"})
    assert "tidak menyediakan rekap absensi" in text
    assert "absensi_harian" in text
    assert upstream.paths == [b"/absensi/rekap"]


async def test_cari_anak_status_filter_the_service_ignores_is_a_clear_error(bare: Client) -> None:
    text = await call_error(bare, "cari_anak", {"status": "izin"})
    assert "tidak mendukung filter status" in text


async def test_cari_anak_filters_of_the_contract_work(bare: Client) -> None:
    body = await call_ok(bare, "cari_anak", {"kelas": "7A"})
    assert [a["id"] for a in body["data"]] == ["A001", "A003"]
    assert set(body["data"][0]) == {"id", "nama", "kelas", "kamar", "status", "nama_wali"}


async def test_detail_anak_without_jenis_kelamin_leaves_it_out(bare: Client) -> None:
    body = await call_ok(bare, "detail_anak", {"id_anak": "A002"})
    assert body == {
        "id": "A002",
        "nama": "Budi Santoso",
        "kelas": "8B",
        "kamar": "Al-Fatih 1",
        "status": "aktif",
        "nama_wali": "Ibu Sari",
    }


async def test_daftar_kamar_works(bare: Client) -> None:
    body = await call_ok(bare, "daftar_kamar", {})
    assert [(k["nama"], k["terisi"]) for k in body["data"]] == [("Al-Fatih 1", 2), ("Aisyah 2", 1)]


async def test_personal_fields_of_the_tutorial_mock_never_leave(bare: Client) -> None:
    outputs = [
        (await bare.call_tool(name, arguments)).model_dump_json()
        for name, arguments in [
            ("cari_anak", {}),
            ("detail_anak", {"id_anak": "A001"}),
            ("absensi_harian", {"tanggal": "2026-10-06"}),
        ]
    ]
    outputs.append((await bare.read_resource("asrama://anak/A003")).model_dump_json())
    for value in ("3171xxxxxxxx", "0812xxxx", "Jl. Melati", "Jl. Mawar", "Jl. Kenanga"):
        assert not any(value in output for output in outputs), value
