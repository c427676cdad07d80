"""Messages the model reads when something fails: short, Indonesian, actionable, never leaking internals."""

import re
from typing import Any

from pydantic import ValidationError

from mcp_asrama.client import (
    AsramaError,
    BadResponse,
    NotFound,
    ServiceAuthError,
    ServiceError,
    ServiceRejected,
    ServiceTimeout,
    ServiceUnavailable,
)
from mcp_asrama.server.arguments import ID_PATTERN

MAX_ERRORS = 10
INTERNAL_ERROR = "Terjadi kesalahan internal di server MCP asrama (sudah dicatat di log). Coba lagi sebentar lagi."

_SERVICE = "Layanan data asrama"
_BY_TYPE: list[tuple[type[AsramaError], str]] = [
    (
        ServiceUnavailable,
        f"{_SERVICE} tidak dapat dihubungi. Coba lagi sebentar lagi; bila tetap gagal, minta "
        "admin memeriksa bahwa layanan berjalan dan ASRAMA_API_URL benar.",
    ),
    (ServiceTimeout, f"{_SERVICE} tidak menjawab dalam batas waktu. Coba lagi, atau persempit filter."),
    (ServiceAuthError, f"{_SERVICE} menolak token server MCP. Minta admin memeriksa ASRAMA_API_TOKEN."),
    (NotFound, "Data tidak ditemukan di layanan data asrama."),
    (ServiceRejected, f"{_SERVICE} menolak permintaan ini. Periksa argumen lalu coba lagi."),
    (ServiceError, f"{_SERVICE} sedang bermasalah. Coba lagi nanti; bila berulang, beri tahu admin."),
    (
        BadResponse,
        f"Jawaban {_SERVICE.lower()} tidak sesuai format yang diharapkan; minta admin memeriksa layanan dan "
        "ASRAMA_API_URL.",
    ),
]

_ARG_HINTS = {
    "id_anak": "harus 1–64 huruf, angka, '-', '_' atau '.' (mis. 'A001')",
    "tanggal": "harus tanggal yang ada, format YYYY-MM-DD (mis. '2026-10-06')",
    "dari": "harus tanggal yang ada, format YYYY-MM-DD",
    "sampai": "harus tanggal yang ada, format YYYY-MM-DD",
    "tanggal_kembali": "harus tanggal yang ada, format YYYY-MM-DD",
    "id_izin": "harus id izin dari ajukan_izin atau daftar_izin (huruf, angka, '-' atau '_')",
}


def service_message(exc: AsramaError) -> str:
    """The message for a data-service failure (with the HTTP status, never the body)."""
    for kind, message in _BY_TYPE:
        if isinstance(exc, kind):
            return f"{message} (HTTP {exc.status})" if exc.status and kind is not NotFound else message
    return INTERNAL_ERROR


def _row(arguments: Any, loc: tuple[Any, ...]) -> str | None:
    """`entri[3] (A004)` for an error inside a list row, naming the row by its (valid) id when it has one."""
    if len(loc) < 2 or not isinstance(loc[1], int) or not isinstance(arguments, dict):
        return None
    rows = arguments.get(loc[0])
    row = rows[loc[1]] if isinstance(rows, list) and 0 <= loc[1] < len(rows) else None
    ident = row.get("id_anak") if isinstance(row, dict) else None
    named = f" ({ident})" if isinstance(ident, str) and re.fullmatch(ID_PATTERN, ident) else ""
    return f"{loc[0]}[{loc[1]}]{named}"


def _describe(error: Any, arguments: Any = None) -> str:
    loc = tuple(error["loc"])
    row = _row(arguments, loc)
    field = ".".join(str(p) for p in loc) or "argumen"
    if row is not None:
        field = " ".join([row, ".".join(str(p) for p in loc[2:])]).strip()
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "missing":
        text = "wajib diisi"
    elif kind == "extra_forbidden":
        text = "argumen tidak dikenal"
    elif str(loc[-1] if loc else "") in _ARG_HINTS:
        text = _ARG_HINTS[str(loc[-1])]
    elif kind in ("less_than_equal", "less_than"):
        text = f"paling besar {ctx.get('le', ctx.get('lt'))}"
    elif kind in ("greater_than_equal", "greater_than"):
        text = f"paling kecil {ctx.get('ge', ctx.get('gt'))}"
    elif kind == "string_too_long":
        text = f"paling panjang {ctx.get('max_length')} karakter"
    elif kind == "string_too_short":
        text = "tidak boleh kosong"
    elif kind in ("literal_error", "enum"):
        text = f"harus salah satu dari {ctx.get('expected')}"
    elif kind.startswith("int_"):
        text = "harus bilangan bulat"
    elif kind.startswith("string_"):
        text = "harus teks"
    else:
        text = "tidak valid"
    return f"{field}: {text}"


def arguments_message(exc: ValidationError, arguments: Any = None) -> str:
    """One line naming each invalid argument and what it must be (never echoing the value); an error in a row of a
    list names the row and its `id_anak`. Nothing is written when any argument is invalid."""
    errors = exc.errors(include_url=False)
    shown = "; ".join(_describe(e, arguments) for e in errors[:MAX_ERRORS])
    more = f"; dan {len(errors) - MAX_ERRORS} lainnya" if len(errors) > MAX_ERRORS else ""
    return f"Argumen tidak valid: {shown}{more}"
