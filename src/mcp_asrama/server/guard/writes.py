"""What every write tool shares: who may write, how the person is asked, what a confirmation's answer means, and
the key that makes the service write it once.

A write tool is two resolvers and a body (the SDK's `Resolve`): a plan resolver reads the data and builds the
change (or raises a `ToolError` naming the problem rows), a question resolver renders the plan as one deterministic
Indonesian question (`ask`), and the body writes only when `accepted`. On 2026-07-28 the question travels as an
`InputRequiredResult` and the plan is built again when the person's answer arrives: if the data changed meanwhile,
the question differs and the SDK asks again. On the handshake era it is an `elicitation/create` in the middle of
the call, which needs a back-channel (stdio); a handshake-era host on stateless HTTP is refused (`NO_BACK_CHANNEL`).
"""

import secrets
from collections.abc import Iterable
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context, ElicitationResult
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import AcceptedElicitation, CancelledElicitation, Elicit
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field

from mcp_asrama.client import AsramaError, Conflict, NotFound, ServiceTimeout
from mcp_asrama.server.asrama_server import state_of
from mcp_asrama.server.errors import service_message
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.confirm import confirmation_key

WRITE_SCOPE = "asrama:write"
MODERN = "2026-07-28"
NO_BACK_CHANNEL = (
    "Host ini memakai protokol MCP lama lewat HTTP tanpa saluran balik, jadi persetujuan pengguna tidak bisa "
    "ditanyakan dan tidak ada yang dicatat. Gunakan host yang mendukung MCP 2026-07-28, atau jalankan lewat stdio."
)
TIMED_OUT = (
    "Layanan data asrama tidak menjawab dalam batas waktu; perubahan mungkin sudah tercatat. Periksa dulu "
    "(mis. dengan absensi_harian atau daftar_izin) sebelum mencatat lagi."
)
Hasil = Literal["ditulis", "ditolak", "dibatalkan", "tetap"]


class Setuju(BaseModel):
    """The confirmation form: one checkbox."""

    setuju: bool = Field(title="Setuju", description="Centang untuk mencatat perubahan di atas")


def allowed(enabled: bool) -> bool:
    """Whether the caller may write: writes turned on (ASRAMA_WRITES), and over HTTP a token with `asrama:write`
    (the local operator — stdio, or HTTP on loopback without auth — has no token)."""
    if not enabled:
        return False
    token = get_access_token()
    return token is None or WRITE_SCOPE in token.scopes


def modern(ctx: Context[Any, Any]) -> bool:
    """Whether the request speaks 2026-07-28 (a form travels in an `InputRequiredResult`, no back-channel needed)."""
    return ctx.protocol_version is not None and is_version_at_least(ctx.protocol_version, MODERN)


def ask(ctx: Context[Any, Any], question: str, named: Iterable[str]) -> Elicit[Setuju]:
    """The person's confirmation of `question`, which names the students `named` (a disclosure, audited as one
    whether the answer is yes or no); refused where it cannot be asked (handshake era without a back-channel). A
    host that declares no form elicitation gets the SDK's `-32021`."""
    if not modern(ctx) and not ctx.session.can_send_request:
        raise ToolError(NO_BACK_CHANNEL)
    audit.disclose(named)
    return Elicit(question, Setuju)


def answer_of(jawaban: ElicitationResult[Setuju]) -> Literal["accepted", "declined", "cancelled"]:
    """An accept counts only with the box ticked; anything else writes nothing."""
    if isinstance(jawaban, AcceptedElicitation) and jawaban.data.setuju:
        return "accepted"
    return "cancelled" if isinstance(jawaban, CancelledElicitation) else "declined"


def not_written(answer: str) -> tuple[Hasil, str]:
    """The result of a declined or cancelled confirmation, for the model."""
    audit.note_write(answer)
    if answer == "cancelled":
        return (
            "dibatalkan",
            "Dibatalkan oleh pengguna; tidak ada yang dicatat. Jangan ulangi kecuali pengguna memintanya.",
        )
    return "ditolak", (
        "Pengguna tidak menyetujui; tidak ada yang dicatat. Tanyakan apa yang perlu diubah, lalu panggil lagi dengan "
        "data yang sudah diperbaiki."
    )


def idempotency_key() -> str:
    """The Idempotency-Key of this write: the claimed confirmation on 2026-07-28; on the handshake era (asked
    in the middle of this one call) a fresh random key, since the call itself runs once."""
    return confirmation_key() or "asrama-" + secrets.token_urlsafe(24)


def actor(ctx: Context[Any, Any]) -> str:
    """Who makes the change, as the service records it: the caller's subject (`local` for the operator)."""
    return state_of(ctx).principal().subject


def write_failed(exc: AsramaError, conflict: str, not_found: str) -> ToolError:
    """The tool error for a write the service did not make (audited `failed`); a timeout may have written. A
    service without the route (404, 405: not ours) gets `not_found` too."""
    audit.note_write("failed")
    if isinstance(exc, ServiceTimeout):
        return ToolError(TIMED_OUT)
    if isinstance(exc, Conflict):
        return ToolError(conflict)
    if isinstance(exc, NotFound) or exc.status == 405:
        return ToolError(not_found)
    return ToolError(service_message(exc))
