"""Messages the model reads when something fails: short, Indonesian, actionable, never leaking internals."""

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
}


def service_message(exc: AsramaError) -> str:
    """The message for a data-service failure (with the HTTP status, never the body)."""
    for kind, message in _BY_TYPE:
        if isinstance(exc, kind):
            return f"{message} (HTTP {exc.status})" if exc.status and kind is not NotFound else message
    return INTERNAL_ERROR


def _describe(error: Any) -> str:
    field = ".".join(str(p) for p in error["loc"]) or "argumen"
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "missing":
        text = "wajib diisi"
    elif kind == "extra_forbidden":
        text = "argumen tidak dikenal"
    elif field in _ARG_HINTS:
        text = _ARG_HINTS[field]
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


def arguments_message(exc: ValidationError) -> str:
    """One line naming each invalid argument and what it must be (never echoing the value)."""
    return "Argumen tidak valid: " + "; ".join(_describe(e) for e in exc.errors(include_url=False))
