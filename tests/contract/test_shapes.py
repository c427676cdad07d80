"""The contract's shapes: a client keeps only what they declare, the service returns at least that, and a write body
built by a caller is the JSON the service takes."""

import inspect
from collections.abc import AsyncIterator
from datetime import date
from types import ModuleType
from typing import Any

import httpx2
import pytest
from pydantic import BaseModel, ValidationError

from mcp_asrama.client import AsramaClient, make_http_client
from mcp_asrama.client import models as client_models
from mcp_asrama.config import ServiceSettings
from mcp_asrama.contract import absensi, anak, hafalan, izin, kesehatan, pelanggaran, perubahan
from mcp_asrama.contract.types import Shape, Strict
from mcp_asrama.service.app import create_app
from mcp_asrama.service.schemas import absensi as s_absensi
from mcp_asrama.service.schemas import anak as s_anak
from mcp_asrama.service.schemas import hafalan as s_hafalan
from mcp_asrama.service.schemas import izin as s_izin
from mcp_asrama.service.schemas import kamar as s_kamar
from mcp_asrama.service.schemas import kesehatan as s_kesehatan
from mcp_asrama.service.schemas import pelanggaran as s_pelanggaran
from mcp_asrama.service.schemas import perubahan as s_perubahan
from tests.conftest import TOKEN

CONTRACT = (absensi, anak, hafalan, izin, kesehatan, pelanggaran, perubahan)
SERVICE = (s_absensi, s_anak, s_hafalan, s_izin, s_kamar, s_kesehatan, s_pelanggaran, s_perubahan)
PERSONAL = {"nik", "no_hp_wali", "alamat", "tanggal_lahir"}
SERVICE_ONLY = {  # what the service returns beyond the shape a client keeps
    s_anak.AnakPublic: PERSONAL,
    s_pelanggaran.PelanggaranPublic: {"keterangan", "dicatat_oleh"},
    s_izin.IzinPublic: {"alasan"},
    s_hafalan.HafalanPublic: {"penguji"},
}
NOT_READ_BY_CLIENTS = {s_absensi.RiwayatPublic, s_absensi.DaftarRiwayat}
pytestmark = pytest.mark.anyio


def _models(modules: tuple[ModuleType, ...], base: type[BaseModel]) -> list[type[BaseModel]]:
    found = {c for m in modules for c in vars(m).values() if inspect.isclass(c) and issubclass(c, base)}
    return sorted(found - {base}, key=lambda c: c.__name__)


def test_no_shape_a_client_keeps_declares_personal_data() -> None:
    for shape in _models(CONTRACT, Shape):
        assert not PERSONAL & set(shape.model_fields), shape.__name__


def test_every_service_answer_extends_the_shape_a_client_keeps() -> None:
    answers = [m for m in _models(SERVICE, BaseModel) if m not in NOT_READ_BY_CLIENTS and not issubclass(m, Strict)]
    assert len(answers) >= 25
    for answer in answers:
        shape = next(b for b in answer.__mro__ if b.__module__.startswith("mcp_asrama.contract"))
        added = set(answer.model_fields) - set(shape.model_fields)
        assert added == SERVICE_ONLY.get(answer, set()), answer.__name__


def test_service_narrows_the_shape_where_it_guarantees_more() -> None:
    assert s_pelanggaran.PelanggaranPublic.model_fields["nama"].is_required()
    assert not pelanggaran.Pelanggaran.model_fields["nama"].is_required()


def test_write_bodies_are_the_contracts() -> None:
    assert s_pelanggaran.PelanggaranIn is pelanggaran.PelanggaranIn
    assert s_hafalan.HafalanIn is hafalan.HafalanIn
    assert s_kesehatan.KunjunganIn is kesehatan.KunjunganIn
    assert s_izin.IzinIn is izin.IzinIn
    assert s_absensi.AbsensiBanyakIn is absensi.AbsensiBanyakIn


def test_a_violation_from_the_service_is_kept_without_its_note_and_recorder() -> None:
    sent = s_pelanggaran.PelanggaranPublic(
        id="P1", id_anak="A001", nama="Ahmad", kelas="7A", tanggal=date(2026, 10, 6), kategori="ringan",
        jenis="telat", nama_jenis="Terlambat", poin=5, keterangan="urusan keluarga", dicatat_oleh="ustadz",
    )  # fmt: skip
    kept = client_models.Pelanggaran.model_validate_json(sent.model_dump_json())
    assert kept.model_dump(mode="json") == {
        "id": "P1", "id_anak": "A001", "nama": "Ahmad", "kelas": "7A", "kamar": None, "tanggal": "2026-10-06",
        "kategori": "ringan", "jenis": "telat", "nama_jenis": "Terlambat", "poin": 5,
    }  # fmt: skip


def test_a_student_with_personal_data_is_kept_without_it() -> None:
    answer = {
        "total": 1,
        "data": [
            {"id": "A001", "nama": "Ahmad", "kelas": "7A", "kamar": None, "status": "aktif", "jenis_kelamin": "L",
             "nama_wali": "Bapak Hasan", "nik": "3171000000000001", "no_hp_wali": "081200000001",
             "alamat": "Jl. Melati", "tanggal_lahir": "2013-01-05"}
        ],
    }  # fmt: skip
    s_anak.DaftarAnak.model_validate(answer)  # what the service sends
    kept = client_models.DaftarAnak.model_validate(answer).data[0]
    assert not PERSONAL & set(kept.model_dump())
    assert not any(value in repr(kept) for value in ("3171000000000001", "081200000001", "Melati"))
    with pytest.raises(ValidationError):
        kept.nama = "other"  # type: ignore[misc]


def test_a_visit_keeps_its_health_details_only_as_the_clinics_shape() -> None:
    sent = {"id": "K1", "id_anak": "A001", "nama": "Ahmad", "kelas": "7A", "tanggal": "2026-10-06",
            "kategori": "demam", "keluhan": "panas", "obat": "parasetamol"}  # fmt: skip
    assert "keluhan" not in client_models.Kunjungan.model_validate(sent).model_dump()
    assert client_models.KunjunganKlinik.model_validate(sent).keluhan == "panas"


@pytest.mark.parametrize(
    ("model", "body", "json"),
    [
        (
            pelanggaran.PelanggaranIn,
            {"id_anak": "A001", "tanggal": date(2026, 10, 6), "jenis": "telat", "keterangan": "  "},
            {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "telat"},
        ),
        (
            izin.IzinIn,
            {"id_anak": "A001", "dari": date(2026, 10, 6), "sampai": date(2026, 10, 7), "jenis": "pulang",
             "absensi_lama": [{"tanggal": date(2026, 10, 6), "status_lama": "belum_dicatat"}]},
            {"id_anak": "A001", "dari": "2026-10-06", "sampai": "2026-10-07", "jenis": "pulang",
             "absensi_lama": [{"tanggal": "2026-10-06", "status_lama": "belum_dicatat"}]},
        ),
        (
            kesehatan.KunjunganIn,
            {"id_anak": "A001", "tanggal": "2026-10-06", "keluhan": " panas ", "kategori": "demam", "petugas": ""},
            {"id_anak": "A001", "tanggal": "2026-10-06", "keluhan": "panas", "kategori": "demam"},
        ),
    ],
)  # fmt: skip
def test_a_write_body_dumps_to_the_json_the_service_takes(
    model: type[Strict], body: dict[str, Any], json: dict[str, Any]
) -> None:
    dumped = model(**body).model_dump(mode="json", exclude_none=True)
    assert dumped == json
    assert model.model_validate(dumped).model_dump(mode="json", exclude_none=True) == json


@pytest.mark.parametrize(
    "body",
    [
        {"id_anak": "A 1", "tanggal": "2026-10-06", "jenis": "telat"},
        {"id_anak": "A001", "tanggal": "6/10/2026", "jenis": "telat"},
        {"id_anak": "A001", "tanggal": 1780000000, "jenis": "telat"},
        {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "Telat!"},
        {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "telat", "keterangan": "a\x00b"},
        {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "telat", "nik": "3171000000000001"},
        {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "telat", "poin": 1001},
    ],
)
def test_a_write_body_refuses_what_the_service_would(body: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        pelanggaran.PelanggaranIn.model_validate(body)


@pytest.fixture
async def asrama(tutorial_db: str) -> AsyncIterator[AsramaClient]:
    app = create_app(ServiceSettings(db_url=tutorial_db, service_token=TOKEN))
    transport = httpx2.ASGITransport(app=app)
    async with make_http_client("http://127.0.0.1", token=TOKEN, timeout=5, transport=transport) as http:
        yield AsramaClient(http)
    app.state.engine.dispose()


async def test_a_typed_body_is_written_and_read_back_without_service_only_fields(asrama: AsramaClient) -> None:
    body = hafalan.HafalanIn(
        id_anak="A001", tanggal=date(2026, 10, 6), jenis="ziyadah", surah=1, ayat_mulai=1, ayat_selesai=7,
        penguji="Ust. Ridwan",
    )  # fmt: skip
    written = await asrama.catat_setoran(body, actor="t", key="contract-test-0001")
    assert (written.id_anak, written.ayat_selesai, written.juz) == ("A001", 7, [1])
    assert "penguji" not in written.model_dump()
    found = await asrama.daftar_hafalan(id_anak="A001", dari=date(2026, 10, 1), sampai=date(2026, 10, 31))
    assert [s.id for s in found.data] == [written.id]
