"""Every tool's happy path against our real data service (in process, SQLite), in both protocol eras.

Each successful call is checked by `call_ok`: structuredContent validates against the tool's outputSchema and the
text block is the same JSON, compact and with non-ASCII unescaped.
"""

import json
from datetime import date, timedelta
from typing import Any

import pytest
from mcp import Client

from mcp_asrama.privacy import RESULT_BUDGET
from tests.conftest import CITRA_ON_THE_6TH, TUTORIAL_KAMAR, insert_rows
from tests.server.conftest import connect, make_service, server_for
from tests.server.support import answering, call_error, call_ok, text_of

pytestmark = pytest.mark.anyio

SEARCH_FIELDS = {"id", "nama", "kelas", "kamar", "status", "nama_wali"}


def ids(rows: list[dict[str, Any]], key: str = "id") -> list[str]:
    return [r[key] for r in rows]


# --- cari_anak ------------------------------------------------------------------------------------------------


async def test_cari_anak_without_filters_lists_everyone_ordered_by_name(mcp: Client) -> None:
    body = await call_ok(mcp, "cari_anak", {})
    assert body["total"] == 3
    assert ids(body["data"]) == ["A001", "A002", "A003"]
    assert "next_offset" not in body
    assert body["data"][0] == {
        "id": "A001",
        "nama": "Ahmad Fauzi",
        "kelas": "7A",
        "kamar": "Al-Fatih 1",
        "status": "aktif",
        "nama_wali": "Bapak Hasan",
    }


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"nama": "citra"}, ["A003"]),
        ({"nama": "SANTOSO"}, ["A002"]),
        ({"kelas": "7A"}, ["A001", "A003"]),
        ({"kamar": "Al-Fatih 1"}, ["A001", "A002"]),
        ({"status": "izin"}, ["A003"]),
        ({"kelas": "7A", "status": "aktif"}, ["A001"]),
        ({"kelas": "7A", "kamar": "Aisyah 2"}, ["A003"]),
        ({"kelas": "9Z"}, []),
    ],
)
async def test_cari_anak_filters_combine(mcp: Client, filters: dict[str, Any], expected: list[str]) -> None:
    body = await call_ok(mcp, "cari_anak", filters)
    assert ids(body["data"]) == expected
    assert body["total"] == len(expected)
    assert all(set(row) == SEARCH_FIELDS for row in body["data"])


async def test_cari_anak_pages_with_next_offset_until_the_end(mcp: Client) -> None:
    first = await call_ok(mcp, "cari_anak", {"limit": 2})
    assert (first["total"], ids(first["data"]), first["next_offset"]) == (3, ["A001", "A002"], 2)
    second = await call_ok(mcp, "cari_anak", {"limit": 2, "offset": first["next_offset"]})
    assert (second["total"], ids(second["data"])) == (3, ["A003"])
    assert "next_offset" not in second


async def test_cari_anak_offset_past_the_end_is_an_empty_page(mcp: Client) -> None:
    body = await call_ok(mcp, "cari_anak", {"offset": 50})
    assert (body["total"], body["data"]) == (3, [])
    assert "next_offset" not in body


@pytest.mark.parametrize("limit", [1, 100])
async def test_cari_anak_accepts_limit_bounds(mcp: Client, limit: int) -> None:
    body = await call_ok(mcp, "cari_anak", {"limit": limit})
    assert len(body["data"]) == min(limit, 3)
    assert ("next_offset" in body) == (limit < 3)


@pytest.mark.parametrize(("limit", "bound"), [(0, "paling kecil 1"), (101, "paling besar 100"), (1000, "100")])
async def test_cari_anak_refuses_limit_out_of_bounds(mcp: Client, limit: int, bound: str) -> None:
    text = await call_error(mcp, "cari_anak", {"limit": limit})
    assert text.startswith("Argumen tidak valid")
    assert "limit" in text
    assert bound in text


async def test_cari_anak_refuses_negative_offset(mcp: Client) -> None:
    text = await call_error(mcp, "cari_anak", {"offset": -1})
    assert "offset" in text


async def test_cari_anak_refuses_unknown_status(mcp: Client) -> None:
    text = await call_error(mcp, "cari_anak", {"status": "lulus"})
    assert "status" in text
    assert "aktif" in text


# --- detail_anak ----------------------------------------------------------------------------------------------


async def test_detail_anak_returns_allowlisted_fields_with_jenis_kelamin(mcp: Client) -> None:
    body = await call_ok(mcp, "detail_anak", {"id_anak": "A003"})
    assert body == {
        "id": "A003",
        "nama": "Citra Lestari",
        "kelas": "7A",
        "kamar": "Aisyah 2",
        "status": "izin",
        "nama_wali": "Bapak Joko",
        "jenis_kelamin": "P",
    }


async def test_detail_anak_unknown_id_is_tool_error_pointing_to_cari_anak(mcp: Client) -> None:
    text = await call_error(mcp, "detail_anak", {"id_anak": "X999"})
    assert "X999" in text
    assert "tidak ditemukan" in text
    assert "cari_anak" in text


# --- daftar_kamar ---------------------------------------------------------------------------------------------


async def test_daftar_kamar_lists_rooms_with_occupancy(mcp: Client) -> None:
    body = await call_ok(mcp, "daftar_kamar", {})
    assert body == {
        "jumlah": 2,
        "data": [
            {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "terisi": 2, "musyrif": "Ust. Ridwan"},
            {"nama": "Aisyah 2", "gedung": "Putri", "kapasitas": 6, "terisi": 1, "musyrif": "Ustz. Halimah"},
        ],
    }


# --- absensi_harian -------------------------------------------------------------------------------------------


async def test_absensi_harian_counts_per_status_and_lists_who_is_not_hadir(mcp: Client) -> None:
    body = await call_ok(mcp, "absensi_harian", {"tanggal": "2026-10-06"})
    assert body["tanggal"] == "2026-10-06"
    assert body["jumlah_anak"] == 3
    assert body["per_status"] == {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 0}
    assert body["tidak_hadir"] == [CITRA_ON_THE_6TH]
    assert "catatan" not in body


async def test_absensi_harian_lists_every_kind_of_absence(mcp: Client) -> None:
    body = await call_ok(mcp, "absensi_harian", {"tanggal": "2026-10-08"})
    assert body["per_status"] == {"hadir": 1, "izin": 0, "sakit": 1, "alpa": 1, "belum_dicatat": 0}
    assert sorted((r["id_anak"], r["status"]) for r in body["tidak_hadir"]) == [("A001", "sakit"), ("A002", "alpa")]


@pytest.mark.parametrize(
    ("filters", "jumlah", "per_status", "listed"),
    [
        ({"kelas": "7A"}, 2, {"hadir": 1, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 0}, ["A003"]),
        ({"kamar": "Al-Fatih 1"}, 2, {"hadir": 2, "izin": 0, "sakit": 0, "alpa": 0, "belum_dicatat": 0}, []),
        ({"kelas": "8B"}, 1, {"hadir": 1, "izin": 0, "sakit": 0, "alpa": 0, "belum_dicatat": 0}, []),
        ({"status": "hadir"}, 3, {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 0}, ["A001", "A002"]),
        ({"status": "sakit"}, 3, {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 0}, []),
        (
            {"kelas": "7A", "status": "izin"},
            2,
            {"hadir": 1, "izin": 1, "sakit": 0, "alpa": 0, "belum_dicatat": 0},
            ["A003"],
        ),
    ],
)
async def test_absensi_harian_filters(
    mcp: Client, filters: dict[str, Any], jumlah: int, per_status: dict[str, int], listed: list[str]
) -> None:
    body = await call_ok(mcp, "absensi_harian", {"tanggal": "2026-10-06", **filters})
    assert body["jumlah_anak"] == jumlah
    assert body["per_status"] == per_status
    assert sorted(ids(body["tidak_hadir"], "id_anak")) == listed


async def test_absensi_harian_day_without_records_says_so_and_lists_everyone_as_belum_dicatat(mcp: Client) -> None:
    body = await call_ok(mcp, "absensi_harian", {"tanggal": "2026-01-01"})
    assert body["jumlah_anak"] == 3
    assert body["per_status"] == {"hadir": 0, "izin": 0, "sakit": 0, "alpa": 0, "belum_dicatat": 3}
    assert [(r["id_anak"], r["status"], r["nama"]) for r in body["tidak_hadir"]] == [
        ("A001", "belum_dicatat", "Ahmad Fauzi"),
        ("A003", "belum_dicatat", "Citra Lestari"),
        ("A002", "belum_dicatat", "Budi Santoso"),
    ]
    assert "Belum ada data absensi" in body["catatan"]


async def test_absensi_harian_lists_absences_before_students_not_yet_recorded(mcp: Client) -> None:
    body = await call_ok(mcp, "absensi_harian", {"tanggal": "2026-10-09"})
    assert body["per_status"] == {"hadir": 0, "izin": 0, "sakit": 1, "alpa": 0, "belum_dicatat": 2}
    listed = [(r["id_anak"], r["status"]) for r in body["tidak_hadir"]]
    assert listed == [("A002", "sakit"), ("A001", "belum_dicatat"), ("A003", "belum_dicatat")]
    assert "catatan" not in body


# --- rekap_absensi --------------------------------------------------------------------------------------------


async def test_rekap_absensi_counts_a_range_and_ranks_absentees(mcp: Client) -> None:
    body = await call_ok(mcp, "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-09"})
    assert (body["dari"], body["sampai"], body["jumlah_anak"]) == ("2026-10-06", "2026-10-09", 3)
    assert body["total"] == {"hadir": 4, "izin": 2, "sakit": 2, "alpa": 2}
    top = body["paling_sering_tidak_hadir"]
    assert [(r["id_anak"], r["tidak_hadir"]) for r in top] == [("A002", 3), ("A003", 2), ("A001", 1)]
    assert top[0] == {
        "id_anak": "A002",
        "nama": "Budi Santoso",
        "kelas": "8B",
        "kamar": "Al-Fatih 1",
        "hadir": 1,
        "izin": 0,
        "sakit": 1,
        "alpa": 2,
        "tidak_hadir": 3,
    }


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"kelas": "7A"}, [("A003", 2), ("A001", 1)]),
        ({"kamar": "Al-Fatih 1"}, [("A002", 3), ("A001", 1)]),
        ({"id_anak": "A001"}, [("A001", 1)]),
    ],
)
async def test_rekap_absensi_filters(mcp: Client, filters: dict[str, Any], expected: list[tuple[str, int]]) -> None:
    body = await call_ok(mcp, "rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31", **filters})
    assert [(r["id_anak"], r["tidak_hadir"]) for r in body["paling_sering_tidak_hadir"]] == expected


async def test_rekap_absensi_leaves_out_students_never_absent(mcp: Client) -> None:
    body = await call_ok(mcp, "rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-06"})
    assert body["total"] == {"hadir": 2, "izin": 1, "sakit": 0, "alpa": 0}
    assert ids(body["paling_sering_tidak_hadir"], "id_anak") == ["A003"]


async def test_rekap_absensi_refuses_reversed_range(mcp: Client) -> None:
    text = await call_error(mcp, "rekap_absensi", {"dari": "2026-10-09", "sampai": "2026-10-06"})
    assert "sampai" in text
    assert "dari" in text


async def test_rekap_absensi_refuses_range_over_a_year(mcp: Client) -> None:
    text = await call_error(mcp, "rekap_absensi", {"dari": "2025-01-01", "sampai": "2026-06-30"})
    assert "366 hari" in text


async def test_rekap_absensi_accepts_a_full_year(mcp: Client) -> None:
    dari = date(2026, 1, 1)
    sampai = dari + timedelta(days=365)
    body = await call_ok(mcp, "rekap_absensi", {"dari": dari.isoformat(), "sampai": sampai.isoformat()})
    assert body["total"]["alpa"] == 2


# --- shape of results -----------------------------------------------------------------------------------------

NON_ASCII = {
    "id": "B001",
    "nama": "Zahrā’ Ṣāliḥah — “Ẓ”",
    "kelas": "7A",
    "kamar": "Aisyah 2",
    "status": "sakit",
    "jenis_kelamin": "P",
    "nama_wali": "Ibu Fāṭimah",
}


@pytest.fixture
def non_ascii_app(db_url: str) -> Any:
    absensi = [{"tanggal": date(2026, 10, 6), "id_anak": "B001", "status": "sakit", "keterangan": "Demam — 38,5 °C"}]
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=[NON_ASCII], absensi=absensi)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("cari_anak", {"nama": "Zahr"}),
        ("detail_anak", {"id_anak": "B001"}),
        ("absensi_harian", {"tanggal": "2026-10-06"}),
        ("rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-06"}),
    ],
)
async def test_text_is_compact_json_with_non_ascii_unescaped(
    non_ascii_app: Any, era: str, name: str, arguments: dict[str, Any]
) -> None:
    async with connect(server_for(non_ascii_app), era) as client:
        await call_ok(client, name, arguments)
        text = text_of(await client.call_tool(name, arguments))
    assert "Ṣāliḥah" in text
    assert "\\u" not in text
    assert "\n" not in text
    assert ", " not in text.replace("— “Ẓ”", "")
    assert '": ' not in text


@pytest.fixture
def crowded_app(db_url: str) -> Any:
    """1,000 students with long names and long notes, all absent on one day."""
    anak = [
        {
            "id": f"S{i:04d}",
            "nama": f"Santri {i:04d} " + "Panjang" * 25,
            "kelas": "9A",
            "kamar": "Al-Fatih 1",
            "status": "aktif",
            "nama_wali": "Wali " + "Panjang" * 25,
        }
        for i in range(1000)
    ]
    absensi = [
        {"tanggal": date(2026, 10, 6), "id_anak": a["id"], "status": "alpa", "keterangan": "Tanpa kabar " * 40}
        for a in anak
    ]
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=anak, absensi=absensi)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


async def test_cari_anak_cut_to_budget_says_so_and_pages_on(crowded_app: Any, era: str) -> None:
    async with connect(server_for(crowded_app), era) as client:
        first = await call_ok(client, "cari_anak", {"limit": 100})
        shown = len(first["data"])
        assert 0 < shown < 100
        assert len(text_of(await client.call_tool("cari_anak", {"limit": 100}))) <= RESULT_BUDGET + 500
        assert first["total"] == 1000
        assert first["next_offset"] == shown
        assert "dipotong" in first["catatan"]
        second = await call_ok(client, "cari_anak", {"limit": 100, "offset": first["next_offset"]})
    assert second["data"][0]["id"] == f"S{shown:04d}"
    assert not set(ids(first["data"])) & set(ids(second["data"]))


async def test_absensi_harian_of_a_big_school_stays_within_budget(crowded_app: Any, era: str) -> None:
    async with connect(server_for(crowded_app), era) as client:
        body = await call_ok(client, "absensi_harian", {"tanggal": "2026-10-06"})
        text = text_of(await client.call_tool("absensi_harian", {"tanggal": "2026-10-06"}))
    assert len(text) <= RESULT_BUDGET + 1000
    assert body["jumlah_anak"] == 1000
    assert body["per_status"] == {"hadir": 0, "izin": 0, "sakit": 0, "alpa": 1000, "belum_dicatat": 0}
    assert 0 < len(body["tidak_hadir"]) < 1000
    assert "dipotong" in body["catatan"]
    assert "kelas" in body["catatan"]


async def test_daftar_kamar_of_a_very_large_school_is_cut_and_says_so(many_rooms_app: Any, era: str) -> None:
    async with connect(server_for(many_rooms_app), era) as client:
        body = await call_ok(client, "daftar_kamar", {})
        text = text_of(await client.call_tool("daftar_kamar", {}))
    assert len(text) <= RESULT_BUDGET + 500
    assert body["jumlah"] == 400
    assert 0 < len(body["data"]) < 400
    assert f"{len(body['data'])} dari 400 kamar" in body["catatan"]
    assert "cari_anak(kamar=" in body["catatan"]


async def test_rekap_absensi_ranks_absentees_whatever_order_the_service_sends(era: str) -> None:
    absent = [1, 5, 0, 3, 7, 2, 9, 4, 6, 8, 11, 10, 0]
    per_anak = [
        {"id_anak": f"R{i:02d}", "hadir": 20 - n, "izin": 0, "sakit": 0, "alpa": n, "tidak_hadir": n}
        for i, n in enumerate(absent)
    ]
    total = {"hadir": sum(20 - n for n in absent), "izin": 0, "sakit": 0, "alpa": sum(absent)}
    rekap = {"dari": "2026-10-01", "sampai": "2026-10-20", "total": total, "jumlah_anak": 13, "per_anak": per_anak}
    async with connect(server_for(answering(200, json.dumps(rekap).encode())), era) as client:
        body = await call_ok(client, "rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-20"})
    ranked = [(r["id_anak"], r["tidak_hadir"]) for r in body["paling_sering_tidak_hadir"]]
    assert [n for _, n in ranked] == [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]
    assert ranked[0] == ("R10", 11)
