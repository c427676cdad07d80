"""`/usulan/<id>` on a remote server (`--auth sekolah`): the page where the signed-in person decides a write the
assistant proposed (channel `halaman`), linked in the write's result. No secret is in the URL or the result: the
page answers only the session of the usulan's own subject (anyone else: "not found", as for an id that never
existed), its form carries the session's CSRF token, and a decision is made with what the person's staff record
grants now (their rooms and classes, `menulis`), through `putuskan` as every channel decides, audited as one
`usulan/halaman` line. Without a session the browser goes through sign-in first and comes back.
"""

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

from mcp.server.mcpserver.exceptions import ToolError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from mcp_asrama.client import AsramaError
from mcp_asrama.server.errors import INTERNAL_ERROR, service_message
from mcp_asrama.server.features.usulan_tools import NOT_FOUND, PESAN, putuskan
from mcp_asrama.server.features.write import Konfirmasi
from mcp_asrama.server.guard.access import Akses
from mcp_asrama.server.guard.audit import WITHHELD, Auditor, Unrecorded
from mcp_asrama.server.guard.scoped import ScopedReader
from mcp_asrama.server.sekolah import pages_html as html
from mcp_asrama.server.sekolah.provider import SekolahProvider
from mcp_asrama.server.sekolah.sessions import Session, Sessions, same
from mcp_asrama.server.sekolah.staff import WRITE, grant

log = logging.getLogger(__name__)

ID = re.compile(r"[A-Za-z0-9_\-]{16,64}")
TITLE = "Persetujuan pencatatan"
NO_WRITE = "Akun ini tidak (lagi) boleh mencatat; tidak ada yang dicatat. Hubungi admin asrama."


class UsulanPages:
    """The decision page of one server's usulan."""

    def __init__(
        self, book: Konfirmasi, provider: SekolahProvider, sessions: Sessions, auditor: Auditor | None
    ) -> None:
        self.book, self.provider, self.sessions, self.auditor = book, provider, sessions, auditor

    def routes(self) -> list[Route]:
        return [Route("/usulan/{id}", self.usulan, methods=["GET", "POST"])]

    async def usulan(self, request: Request) -> Response:
        id_usulan = request.path_params["id"]
        if not ID.fullmatch(id_usulan):
            return html.message(TITLE, NOT_FOUND, status=404)
        session = await self.sessions.current(request)
        if session is None:
            if request.method == "POST":
                return html.message(TITLE, "Sesi tidak sah atau sudah berakhir. Muat ulang halaman ini.", status=403)
            return RedirectResponse(f"/masuk?lanjut={quote('/usulan/' + id_usulan)}", status_code=303)
        found = await self.book.store.ambil(id_usulan)
        if found is None or found.subject != session.email or found.saluran != "halaman":
            return html.message(TITLE, NOT_FOUND, status=404)
        if request.method == "GET":
            decided = await self.book.store.putusan(id_usulan)
            status = decided.status if decided else "kedaluwarsa" if found.kedaluwarsa() else "menunggu"
            if status != "menunggu":
                return html.message(TITLE, PESAN[status], status=200)
            return html.usulan(id_usulan=id_usulan, csrf=session.csrf, text=found.pertanyaan)
        form = await request.form()
        if not same(session.csrf, str(form.get("csrf") or "")):
            return html.message(TITLE, "Formulir tidak sah. Muat ulang halaman ini.", status=403)
        keputusan = form.get("keputusan")
        if keputusan not in ("setuju", "tolak"):
            return html.message(TITLE, "Keputusan tidak dikenal; tidak ada yang dicatat.", status=400)
        return await self._decide(session, id_usulan, found.tool, "setuju" if keputusan == "setuju" else "tolak")

    async def _decide(self, session: Session, id_usulan: str, tool: str, keputusan: Any) -> Response:
        try:
            async with self._event(session.email) as line:
                line["target"] = tool
                line["arguments"] = {"id_usulan": id_usulan, "keputusan": keputusan}
                staff = await self.provider.staff(session.email)
                granted = grant(staff, [WRITE]) if staff is not None else None
                if granted is None or WRITE not in granted.scopes:
                    raise ToolError(NO_WRITE)
                reader = ScopedReader(self.provider.directory, Akses.parse(granted.claim))
                answer, _ = await putuskan(self.book, reader, session.email, id_usulan, None, keputusan, "halaman")
        except ToolError as exc:
            return html.message(TITLE, str(exc), status=404 if str(exc) == NOT_FOUND else 409)
        except Unrecorded:
            return html.message(TITLE, WITHHELD, status=503)
        except AsramaError as exc:
            log.info("page decision failed on the data service", extra={"error": type(exc).__name__})
            return html.message(TITLE, service_message(exc), status=503)
        except Exception as exc:  # masked: never a traceback or a message that could name a child
            log.error("page decision crashed", extra={"error": type(exc).__name__})
            return html.message(TITLE, INTERNAL_ERROR, status=500)
        if answer.id_usulan_baru and answer.pertanyaan:  # the data changed: the new question, asked again
            return html.usulan(
                id_usulan=answer.id_usulan_baru, csrf=session.csrf, text=answer.pertanyaan, note=answer.pesan
            )
        return html.message(TITLE, answer.pesan, status=200)

    @asynccontextmanager
    async def _event(self, subject: str) -> AsyncIterator[dict[str, Any]]:
        if self.auditor is None:
            yield {}
            return
        async with self.auditor.event("usulan/halaman", subject, "halaman") as line:
            yield line
