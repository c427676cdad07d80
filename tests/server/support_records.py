"""The leaky upstream's routes of issue 10 (pelanggaran, hafalan, kesehatan): our service's contract, served by a
system that adds personal data, unknown fields and, to every clinic visit, health values that only a clinic
principal may ever see (`HEALTH`). Used by `support.leaky_upstream`."""

from datetime import date
from typing import Any

from fastapi import FastAPI, Header, HTTPException

from tests.conftest import service_client

# The write tools of issue 10 (each adds one record); catat_kunjungan_klinik only for `peran:kesehatan`.
RECORD_TOOLS = ["catat_pelanggaran", "catat_setoran_hafalan", "catat_kunjungan_klinik"]
CLINIC = ["all", "peran:kesehatan"]

# One valid call of each read tool of issue 10 that reaches the upstream for the office (`all`): kesehatan_anak
# does not (the office is not clinic staff), and is tested on its own.
RECORD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("pelanggaran_anak", {"id_anak": "A001"}),
    ("rekap_pelanggaran", {"dari": "2026-10-01", "sampai": "2026-10-31"}),
    ("hafalan_anak", {"id_anak": "A001"}),
    ("progres_hafalan", {}),
    ("rekap_kesehatan", {"dari": "2026-10-01", "sampai": "2026-10-31"}),
]

# Written text a record carries that no tool shows (a violation's note, who recorded it, an examiner's name).
RECORD_EXTRAS = {
    "keterangan": "Keterangan-Rahasia: ketahuan bersama teman sekamar",
    "dicatat_oleh": "pencatat-rahasia-77",
    "penguji": "Penguji-Rahasia Ust. Fulan",
}


def health_of(id_anak: str) -> dict[str, str]:
    """The health values of one student's visit: each distinctive, to be found anywhere."""
    return {
        "keluhan": f"keluhan-rahasia-{id_anak}",
        "tindakan": f"tindakan-rahasia-{id_anak}",
        "obat": f"obat-rahasia-{id_anak}",
        "rujukan": f"rujukan-rahasia-{id_anak}",
        "petugas": f"petugas-rahasia-{id_anak}",
    }


HEALTH = {value for i in ("A001", "A002", "A003") for value in health_of(i).values()}


def add_record_routes(
    app: FastAPI,
    anak: dict[str, dict[str, Any]],
    check: Any,
    pick: Any,
    extras: dict[str, Any],
) -> None:
    """Add the routes to `app`: `anak` the students with their personal data, `check` the token check, `pick` the
    case-insensitive filter, `extras` what the system adds to every response."""

    def records(kind: str, filters: dict[str, str | None], id_anak: str | None) -> list[dict[str, Any]]:
        students = pick(list(anak.values()), **filters)
        return [
            {**a, "id_anak": a["id"], "id": f"{kind}-{a['id']}", "tanggal": "2026-10-06"}
            for a in students
            if id_anak is None or a["id"] == id_anak
        ]

    @app.get("/pelanggaran/jenis")
    def jenis(authorization: str | None = Header(None)) -> dict[str, Any]:
        check(authorization)
        kind = {"kode": "membawa_hp", "nama": "Membawa HP", "kategori": "sedang", "poin": 25}
        return {"data": [{**kind, **extras}], **extras}

    @app.get("/pelanggaran")
    def pelanggaran(
        id_anak: str | None = None,
        kelas: str | None = None,
        kamar: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        check(authorization)
        rows = [
            {**r, "kategori": "sedang", "jenis": "membawa_hp", "nama_jenis": "Membawa HP", "poin": 25, **RECORD_EXTRAS}
            for r in records("p", {"kelas": kelas, "kamar": kamar}, id_anak)
        ]
        return {"total": len(rows), "data": rows, **extras}

    @app.get("/pelanggaran/rekap")
    def rekap_pelanggaran(
        dari: date,
        sampai: date,
        kelas: str | None = None,
        kamar: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        check(authorization)
        rows = [
            {**a, "id_anak": a["id"], "ringan": 0, "sedang": 1, "berat": 0, "jumlah": 1, "poin": 25, **RECORD_EXTRAS}
            for a in pick(list(anak.values()), kelas=kelas, kamar=kamar)
        ]
        total = {"ringan": 0, "sedang": len(rows), "berat": 0, "jumlah": len(rows), "poin": 25 * len(rows)}
        return {
            "dari": dari.isoformat(),
            "sampai": sampai.isoformat(),
            "jumlah_anak": len(rows),
            "total": total,
            "per_anak": rows,
            **extras,
        }

    @app.get("/hafalan")
    def hafalan(
        id_anak: str | None = None,
        kelas: str | None = None,
        kamar: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        check(authorization)
        deposit = {"jenis": "ziyadah", "surah": 67, "nama_surah": "Al-Mulk", "ayat_mulai": 1, "ayat_selesai": 10}
        rows = [
            {**r, **deposit, "juz": [29], "nilai": 85, **RECORD_EXTRAS}
            for r in records("h", {"kelas": kelas, "kamar": kamar}, id_anak)
        ]
        return {"total": len(rows), "data": rows, **extras}

    @app.get("/hafalan/progres")
    def progres(
        id_anak: str | None = None,
        kelas: str | None = None,
        kamar: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        check(authorization)
        rows = [
            {**a, "id_anak": a["id"], "ayat": 10, "juz": 0.04, "setoran_terakhir": "2026-10-06", "ayat_per_pekan": 2.5}
            for a in pick(list(anak.values()), kelas=kelas, kamar=kamar)
            if id_anak is None or a["id"] == id_anak
        ]
        return {"jumlah_anak": len(rows), "rata_rata": {"ayat": 10, "juz": 0.04, **extras}, "data": rows, **extras}

    @app.get("/kesehatan")
    def kesehatan(
        id_anak: str | None = None,
        kelas: str | None = None,
        kamar: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        check(authorization)
        rows = [
            {**r, "kategori": "demam", **health_of(r["id_anak"]), **RECORD_EXTRAS}
            for r in records("k", {"kelas": kelas, "kamar": kamar}, id_anak)
        ]
        return {"total": len(rows), "data": rows, **extras}

    @app.get("/kesehatan/rekap")
    def rekap_kesehatan(
        dari: date,
        sampai: date,
        kelas: str | None = None,
        kamar: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        check(authorization)
        students = pick(list(anak.values()), kelas=kelas, kamar=kamar)
        # A service that should send counts only, and sends who they are and what ailed them as well.
        leaked = [{**a, **health_of(a["id"])} for a in students]
        per = [{"kategori": "demam", "kunjungan": len(students), "anak": len(students), "siapa": leaked}]
        per += [{"kategori": k, "kunjungan": 0, "anak": 0} for k in ("batuk-pilek", "pencernaan", "cedera")]
        return {
            "dari": dari.isoformat(),
            "sampai": sampai.isoformat(),
            "kunjungan": len(students),
            "anak": len(students),
            "per_kategori": per,
            "per_anak": leaked,
            **extras,
        }

    @app.post("/{anything:path}")
    def refuse(anything: str) -> None:
        raise HTTPException(status_code=405, detail="read-only fake")


# --- records made in the REAL data service through its own routes (October 2026) -------------------------------

SECRET = {"keluhan": "keluhan-asli-rahasia", "tindakan": "kompres-rahasia", "obat": "parasetamol-rahasia",
          "rujukan": "puskesmas-rahasia", "petugas": "perawat-rahasia"}  # fmt: skip
SECRET_VALUES = (*SECRET.values(), "batuk-rahasia")
VIOLATIONS = [("A001", "membawa_hp"), ("A002", "berkelahi"), ("A003", "terlambat_sholat")]
DEPOSITS = [("A001", 67, 1, 30), ("A003", 78, 1, 40)]
VISITS = [("A001", "demam", SECRET), ("A002", "batuk-pilek", {"keluhan": "batuk-rahasia"})]


async def _post(app: Any, path: str, body: dict[str, Any], key: str) -> None:
    async with service_client(app) as rest:
        made = await rest.post(path, json=body, headers={"Idempotency-Key": key, "X-Asrama-Actor": "seed"})
    assert made.status_code == 201, made.text


async def seed_pelanggaran(app: Any) -> None:
    """A violation of each student (its note personal)."""
    for n, (id_anak, jenis) in enumerate(VIOLATIONS):
        body = {"id_anak": id_anak, "tanggal": f"2026-10-0{n + 6}", "jenis": jenis, "keterangan": "catatan-rahasia"}
        await _post(app, "/pelanggaran", body, f"seed-pelanggaran-{n:04d}")


async def seed_hafalan(app: Any) -> None:
    """A001 Al-Mulk (30 ayat), A003 An-Naba' 1-40; A002 nothing."""
    for n, (id_anak, surah, mulai, selesai) in enumerate(DEPOSITS):
        deposit = {"surah": surah, "ayat_mulai": mulai, "ayat_selesai": selesai, "penguji": "penguji-rahasia"}
        body = {"id_anak": id_anak, "tanggal": "2026-10-06", "jenis": "ziyadah", "nilai": 80, **deposit}
        await _post(app, "/hafalan", body, f"seed-hafalan-000-{n:04d}")


async def seed_kesehatan(app: Any) -> None:
    """A001 demam (every detail), A002 batuk-pilek; A003 never visited."""
    for n, (id_anak, kategori, details) in enumerate(VISITS):
        body = {"id_anak": id_anak, "tanggal": "2026-10-08", "kategori": kategori, **details}
        await _post(app, "/kesehatan", body, f"seed-kesehatan-{n:04d}")
