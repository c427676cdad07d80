"""Helpers for the MCP server's tests: result checks, and fake upstreams for services we do not control.

The fakes stand only for the data service (an upstream); our own server, client and privacy code always run for real.
"""

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from datetime import date
from typing import Any

import anyio
import jsonschema
from anyio.abc import SocketStream
from fastapi import FastAPI, Header, HTTPException, Query
from mcp import Client
from mcp_types import CallToolResult

from mcp_asrama.server import features
from tests.conftest import TOKEN
from tests.server.support_records import RECORD_EXTRAS, add_record_routes

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

TOOLS = ["cari_anak", "detail_anak", "daftar_kamar", "absensi_harian", "rekap_absensi", "pelanggaran_anak",
         "rekap_pelanggaran", "hafalan_anak", "progres_hafalan", "kesehatan_anak", "rekap_kesehatan",
         "daftar_izin"]  # fmt: skip
WRITE_TOOLS = ["catat_absensi", "ajukan_izin", "akhiri_izin"]


def _own(module: Any) -> set[str]:
    """What a feature module defines (its functions, its write tools) and its domain's name (its resource's)."""
    defined = {k for k, v in vars(module).items() if getattr(v, "__module__", None) == module.__name__}
    return defined | {spec.tool for spec in getattr(module, "PENULISAN", ())} | {module.__name__.rsplit(".", 1)[1]}


JOINED = {name for module in features.JOINED for name in _own(module)}


def listed(names: list[str]) -> list[str]:
    """`names` (tools, resources) but those of a feature module that joined by itself (`features.JOINED`): the
    lists here are of the modules listed by hand; a joined module's own test file checks its tools."""
    return [name for name in names if name not in JOINED]


def assert_listed(names: list[str], expected: list[str]) -> None:
    """`expected` first, in order; after them only a joined module's tools."""
    assert names[: len(expected)] == expected and listed(names[len(expected) :]) == []


# One valid call of every tool, reaching the upstream (tutorial data: A001 exists, 2026-10-06 has records).
VALID_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("cari_anak", {}),
    ("detail_anak", {"id_anak": "A001"}),
    ("daftar_kamar", {}),
    ("absensi_harian", {"tanggal": "2026-10-06"}),
    ("rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31"}),
    ("daftar_izin", {}),
]
RESOURCE_URIS = ["asrama://kamar", "asrama://anak/A001", "asrama://absensi/2026-10-06"]


def text_of(result: CallToolResult) -> str:
    """The single text block of a tool result."""
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert block.type == "text"
    return block.text


def compact(value: Any) -> str:
    """The JSON text the model should read: no whitespace between tokens, non-ASCII as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


async def call_ok(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must succeed; check structuredContent against outputSchema and the text against it."""
    result = await client.call_tool(name, arguments)
    text = text_of(result)
    assert not result.is_error, text
    body = result.structured_content
    assert isinstance(body, dict)
    tool = next(t for t in (await client.list_tools()).tools if t.name == name)
    assert tool.output_schema is not None
    validator = jsonschema.Draft202012Validator(
        tool.output_schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    validator.validate(body)
    assert text == compact(body)
    return body


async def call_error(client: Client, name: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must fail as a tool result; return its (short, clean) text."""
    result = await client.call_tool(name, arguments)
    text = text_of(result)
    assert result.is_error, text
    assert result.structured_content is None
    assert_clean(text)
    return text


def assert_clean(text: str) -> None:
    """A message for the model: short, one paragraph, no SDK prefix, traceback or pydantic dump."""
    assert 0 < len(text) <= 300, text
    assert "\n" not in text
    for leak in ("Traceback", "Error executing tool", "validation error", "input_value", "pydantic", "httpx"):
        assert leak not in text, text


# --- fake upstreams -------------------------------------------------------------------------------------------


class Recording:
    """Wraps an ASGI app and records the raw path and query of every request that reaches it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[bytes, bytes]] = []

    @property
    def paths(self) -> list[bytes]:
        return [path for path, _ in self.requests]

    @property
    def queries(self) -> list[bytes]:
        return [query for _, query in self.requests]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.requests.append((scope["raw_path"], scope["query_string"]))
        await self.app(scope, receive, send)


def answering(
    status: int, body: bytes, content_type: bytes = b"application/json", headers: dict[bytes, bytes] | None = None
) -> Any:
    """An upstream that answers every request with the same status, body and headers."""
    fixed = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *(headers or {}).items()]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = fixed
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def crashing(message: str) -> Any:
    """An upstream whose every request raises (in process, the exception reaches our client as is)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raise RuntimeError(message)

    return app


@asynccontextmanager
async def sleeping_upstream(delay: float) -> AsyncIterator[str]:
    """A real socket on 127.0.0.1 that reads a request and answers only after `delay` seconds; yields its URL."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)  # noqa: S610 (anyio, not Django)

    async def handle(stream: SocketStream) -> None:
        async with stream:
            try:
                await stream.receive()
                await anyio.sleep(delay)
                await stream.send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
            except (anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                pass  # the client gave up first, as it should

    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, handle)
        yield f"http://127.0.0.1:{port}"
        group.cancel_scope.cancel()


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _check_token(authorization: str | None) -> None:
    if authorization != f"Bearer {TOKEN}":
        raise HTTPException(status_code=401, detail="Token tidak valid")


def tutorial_upstream(extra: list[dict[str, Any]] | None = None) -> FastAPI:
    """The tutorial's mock service, contract and all: personal fields in every record, `/anak` knows only nama,
    kelas, kamar and limit (other query parameters, `offset` too, are ignored), `/absensi` records carry only
    id_anak, status and keterangan, and there is no `/absensi/rekap`. On 2026-10-07 A003 has no record yet;
    `extra` students have none at all."""
    anak = [
        {"id": "A001", "nama": "Ahmad Fauzi", "kelas": "7A", "kamar": "Al-Fatih 1", "status": "aktif",
         "nik": "3171xxxxxxxx0001", "no_hp_wali": "0812xxxx001", "alamat": "Jl. Melati No. 1, Bogor",
         "nama_wali": "Bapak Hasan"},
        {"id": "A002", "nama": "Budi Santoso", "kelas": "8B", "kamar": "Al-Fatih 1", "status": "aktif",
         "nik": "3171xxxxxxxx0002", "no_hp_wali": "0812xxxx002", "alamat": "Jl. Mawar No. 2, Depok",
         "nama_wali": "Ibu Sari"},
        {"id": "A003", "nama": "Citra Lestari", "kelas": "7A", "kamar": "Aisyah 2", "status": "izin",
         "nik": "3171xxxxxxxx0003", "no_hp_wali": "0812xxxx003", "alamat": "Jl. Kenanga No. 3, Bekasi",
         "nama_wali": "Bapak Joko"},
    ]  # fmt: skip
    anak += extra or []
    kamar = [
        {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "musyrif": "Ust. Ridwan"},
        {"nama": "Aisyah 2", "gedung": "Putri", "kapasitas": 6, "musyrif": "Ustz. Halimah"},
    ]
    absensi = {
        "2026-10-06": [
            {"id_anak": "A001", "status": "hadir"},
            {"id_anak": "A002", "status": "hadir"},
            {"id_anak": "A003", "status": "izin", "keterangan": "Pulang, acara keluarga"},
        ],
        "2026-10-07": [{"id_anak": "A001", "status": "hadir"}, {"id_anak": "A002", "status": "alpa"}],
    }
    app = FastAPI()

    @app.get("/anak")
    def list_anak(
        nama: str | None = None,
        kelas: str | None = None,
        kamar_: str | None = Query(None, alias="kamar"),
        limit: int = Query(20, le=100),
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        _check_token(authorization)
        found = [a for a in anak if not nama or nama.lower() in a["nama"].lower()]
        found = [a for a in found if not kelas or a["kelas"].lower() == kelas.lower()]
        found = [a for a in found if not kamar_ or a["kamar"].lower() == kamar_.lower()]
        return {"total": len(found), "data": found[:limit]}

    @app.get("/anak/{id_anak}")
    def detail_anak(id_anak: str, authorization: str | None = Header(None)) -> dict[str, Any]:
        _check_token(authorization)
        for a in anak:
            if a["id"] == id_anak:
                return a
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")

    @app.get("/kamar")
    def list_kamar(authorization: str | None = Header(None)) -> dict[str, Any]:
        _check_token(authorization)
        return {"data": [{**k, "terisi": sum(a["kamar"] == k["nama"] for a in anak)} for k in kamar]}

    @app.get("/absensi")
    def list_absensi(tanggal: str, authorization: str | None = Header(None)) -> dict[str, Any]:
        _check_token(authorization)
        return {"tanggal": tanggal, "data": absensi.get(tanggal, [])}

    return app


# Personal data and fields a future service might add, each value distinctive enough to be found anywhere.
PERSONAL = {
    "A001": {
        "nik": "3171990011223301",
        "no_hp_wali": "0899-5550-1101",
        "alamat": "Jl. Rahasia Gang Sunyi No. 1",
        "tanggal_lahir": "2011-07-17",
        "email_wali": "wali.a001@rahasia.sch.id",
        "nisn": "NISN0099887701",
        "riwayat_penyakit": "asma-kronis-rahasia-01",
        "kesehatan": {"catatan_dokter": "alergi-rahasia-01"},
    },
    "A002": {
        "nik": "3171990011223302",
        "no_hp_wali": "0899-5550-1102",
        "alamat": "Jl. Rahasia Gang Sunyi No. 2",
        "tanggal_lahir": "2010-03-29",
        "email_wali": "wali.a002@rahasia.sch.id",
        "nisn": "NISN0099887702",
        "riwayat_penyakit": "epilepsi-rahasia-02",
        "kesehatan": {"catatan_dokter": "alergi-rahasia-02"},
    },
    "A003": {
        "nik": "3171990011223303",
        "no_hp_wali": "0899-5550-1103",
        "alamat": "Jl. Rahasia Gang Sunyi No. 3",
        "tanggal_lahir": "2012-11-23",
        "email_wali": "wali.a003@rahasia.sch.id",
        "nisn": "NISN0099887703",
        "riwayat_penyakit": "diabetes-rahasia-03",
        "kesehatan": {"catatan_dokter": "alergi-rahasia-03"},
    },
}
ROOM_EXTRAS = {"kode_kunci": "KUNCI-RAHASIA-4242", "cctv_url": "rtsp://cctv-rahasia.local/kamar"}
RESPONSE_EXTRAS = {"debug": {"sql": "SELECT-RAHASIA * FROM anak", "server": "db-rahasia.internal"}}
IZIN_EXTRAS = {"alasan": "Alasan-Rahasia: ayah dirawat di RS"}
NOT_FOUND_BODY = {"detail": "tidak ada", "nik_terakhir": "3171990011223399", "trace": "Traceback-RAHASIA"}


def leaked_values() -> set[str]:
    """Every value the leaky upstream sends that must never reach the model."""
    values: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        else:
            values.add(str(value))

    for record in (*PERSONAL.values(), ROOM_EXTRAS, RESPONSE_EXTRAS, IZIN_EXTRAS, NOT_FOUND_BODY, RECORD_EXTRAS):
        walk(record)
    values.discard("tidak ada")
    return values


def leaky_upstream() -> FastAPI:
    """Our service's contract (enriched attendance, `/absensi/rekap`) served by a system that adds personal data and
    fields we have never heard of to every record and every response, and puts personal data in its 404 body."""
    public = {
        "A001": {"id": "A001", "nama": "Ahmad Fauzi", "kelas": "7A", "kamar": "Al-Fatih 1", "status": "aktif",
                 "jenis_kelamin": "L", "nama_wali": "Bapak Hasan"},
        "A002": {"id": "A002", "nama": "Budi Santoso", "kelas": "8B", "kamar": "Al-Fatih 1", "status": "aktif",
                 "jenis_kelamin": "L", "nama_wali": "Ibu Sari"},
        "A003": {"id": "A003", "nama": "Citra Lestari", "kelas": "7A", "kamar": "Aisyah 2", "status": "izin",
                 "jenis_kelamin": "P", "nama_wali": "Bapak Joko"},
    }  # fmt: skip
    anak = {k: {**v, **PERSONAL[k]} for k, v in public.items()}
    attendance = {"A001": "hadir", "A002": "alpa", "A003": "izin"}
    app = FastAPI()

    def pick(records: list[dict[str, Any]], **filters: str | None) -> list[dict[str, Any]]:
        for key, wanted in filters.items():
            if wanted:
                records = [r for r in records if str(r.get(key, "")).lower() == wanted.lower()]
        return records

    @app.get("/anak")
    def list_anak(
        nama: str | None = None,
        kelas: str | None = None,
        kamar: str | None = None,
        status: str | None = None,
        limit: int = 20,
        offset: int = 0,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        _check_token(authorization)
        found = [a for a in anak.values() if not nama or nama.lower() in a["nama"].lower()]
        found = pick(found, kelas=kelas, kamar=kamar, status=status)
        return {"total": len(found), "data": found[offset : offset + limit], **RESPONSE_EXTRAS}

    @app.get("/anak/{id_anak}")
    def detail_anak(id_anak: str, authorization: str | None = Header(None)) -> Any:
        _check_token(authorization)
        if id_anak not in anak:
            raise HTTPException(status_code=404, detail=NOT_FOUND_BODY)
        return anak[id_anak]

    @app.get("/kamar")
    def list_kamar(authorization: str | None = Header(None)) -> dict[str, Any]:
        _check_token(authorization)
        rooms = [
            {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "terisi": 2, "musyrif": "Ust. Ridwan"},
            {"nama": "Aisyah 2", "gedung": "Putri", "kapasitas": 6, "terisi": 1, "musyrif": "Ustz. Halimah"},
        ]
        return {"data": [{**r, **ROOM_EXTRAS} for r in rooms], **RESPONSE_EXTRAS}

    def record(id_anak: str) -> dict[str, Any]:
        status = attendance[id_anak]
        note = None if status == "hadir" else f"keterangan {id_anak}"
        return {**anak[id_anak], "id_anak": id_anak, "status": status, "keterangan": note}

    @app.get("/absensi")
    def list_absensi(
        tanggal: date,
        kelas: str | None = None,
        kamar: str | None = None,
        status: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        _check_token(authorization)
        records = pick([record(i) for i in anak], kelas=kelas, kamar=kamar, status=status)
        return {"tanggal": tanggal.isoformat(), "data": records, **RESPONSE_EXTRAS}

    @app.get("/absensi/rekap")
    def rekap(
        dari: date,
        sampai: date,
        kelas: str | None = None,
        kamar: str | None = None,
        id_anak: str | None = None,
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        _check_token(authorization)
        days = (sampai - dari).days + 1
        per_anak = []
        for i in pick(list(anak.values()), kelas=kelas, kamar=kamar, id=id_anak):
            counts = {s: 0 for s in ("hadir", "izin", "sakit", "alpa")}
            counts[attendance[i["id"]]] = days
            absent = days - counts["hadir"]
            per_anak.append({**i, "id_anak": i["id"], **counts, "tidak_hadir": absent})
        total = {s: sum(r[s] for r in per_anak) for s in ("hadir", "izin", "sakit", "alpa")}
        return {
            "dari": dari.isoformat(),
            "sampai": sampai.isoformat(),
            "total": total,
            "jumlah_anak": len(per_anak),
            "per_anak": per_anak,
            **RESPONSE_EXTRAS,
        }

    @app.get("/izin")
    def list_izin(
        kelas: str | None = None, kamar: str | None = None, authorization: str | None = Header(None)
    ) -> dict[str, Any]:
        _check_token(authorization)
        running = {"id": "izin-A003-rahasia", "dari": "2026-10-05", "sampai": "2026-10-09", "jenis": "pulang"}
        found = [
            {**a, "id_anak": a["id"], **running, "aktif": True, **IZIN_EXTRAS}
            for a in pick([anak["A003"]], kelas=kelas, kamar=kamar)
        ]
        return {"total": len(found), "data": found, **RESPONSE_EXTRAS}

    add_record_routes(app, anak, _check_token, pick, RESPONSE_EXTRAS)
    return app
