"""The browser page that decides an usulan, for a server on the person's own computer (`ASRAMA_KONFIRMASI=halaman`,
stdio only).

`Halaman.buka(id, secret)` binds a free loopback port (127.0.0.1 only; bound lazily, only while an usulan waits)
and opens `http://127.0.0.1:<port>/usulan/<id>#<secret>` in the person's default browser with `webbrowser` (which
honours $BROWSER). The secret travels only in the URL's fragment, which a browser never sends: the page's script
posts it in each request's body. Nothing here prints: the stdio transport has pointed fd 1 at stderr
(`stdio_pipes`), so even a browser's own chatter misses the wire; log lines carry neither the secret nor a name.

- `GET /usulan/<id>`: the page (`confirm_page_html`: self-contained, its CSP allows nothing but its own origin);
- `POST /usulan/<id>/pertanyaan` `{rahasia}`: the question and how the usulan stands;
- `POST /usulan/<id>/keputusan` `{rahasia, keputusan}`: the decision, through `putuskan` (the one the view's tool
  uses) as the local principal on channel `halaman`, audited as one `usulan/halaman` line (`Auditor.event`); a
  changed question comes back with its new id and secret, kept by the page in memory only.

Host and Origin are checked as on our other servers (`http_guard`): a Host that is not a loopback name → 421, an
Origin other than the page's own → 403; a missing or wrong secret, another subject's usulan, a replay → refused,
nothing written. Once no usulan waits (each decided or expired) the port is closed; at the end of the server's
lifespan too. The honest limit: the page trusts whoever sits at this computer (and any program of this user that
reads the URL the browser was given).
"""

import logging
import re
import socket
import time
import webbrowser
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from mcp_asrama import sdk_seams
from mcp_asrama.client import AsramaError
from mcp_asrama.runtime.http_guard import HostOriginGate, HttpPolicy
from mcp_asrama.server.confirm_page_html import CSP, DOCUMENT
from mcp_asrama.server.errors import INTERNAL_ERROR, service_message
from mcp_asrama.server.features.usulan_tools import NOT_FOUND, PESAN, WRONG_KEY, putuskan
from mcp_asrama.server.features.write import Konfirmasi
from mcp_asrama.server.guard.access import LOCAL_SUBJECT
from mcp_asrama.server.guard.audit import WITHHELD, Auditor, Unrecorded
from mcp_asrama.server.guard.scoped import ScopedReader
from mcp_asrama.server.guard.usulan import Usulan, matches

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
NO_BROWSER = (
    "Peramban tidak dapat dibuka di komputer ini, jadi tidak ada yang dicatat. Minta admin memeriksa peramban "
    "bawaan (atau $BROWSER), atau pakai host yang dapat menanyakan persetujuan."
)
INVALID = "Permintaan tidak valid; tidak ada yang dicatat."
MAX_BODY = 4096
OPEN_WAIT = 5.0  # seconds to wait for the browser's verdict
ID = r"[A-Za-z0-9_\-]{16,64}"  # an usulan id, a secret
HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}


class Pertanyaan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rahasia: Annotated[str, Field(pattern=ID)]


class Keputusan(Pertanyaan):
    keputusan: Literal["setuju", "tolak"]


def _json(code: int, **body: Any) -> JSONResponse:
    """A JSON answer without its empty fields, never cached."""
    return JSONResponse({k: v for k, v in body.items() if v}, status_code=code, headers=HEADERS)


async def _body(request: Request, model: type[Pertanyaan]) -> Any:
    """The request's JSON body as `model`, at most `MAX_BODY` bytes; None for anything else."""
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            return None
    try:
        return model.model_validate_json(data)
    except ValidationError:
        return None


@asynccontextmanager
async def _unaudited() -> AsyncIterator[dict[str, Any]]:
    yield {}


class _Server:
    """One binding of the page: a uvicorn server on its own loopback socket (its signals left to the process)."""

    def __init__(self, app: Any) -> None:
        import uvicorn  # only once a page opens (a stdio start never loads it otherwise)

        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.socket.bind((LOOPBACK, 0))
        self.socket.listen(16)
        self.port = int(self.socket.getsockname()[1])
        self.origin = f"http://{LOOPBACK}:{self.port}"
        gate = HostOriginGate(app, HttpPolicy.of(LOOPBACK, origins=[self.origin]))
        config = uvicorn.Config(
            gate, log_config=None, access_log=False, lifespan="off", server_header=False, timeout_graceful_shutdown=2
        )
        # uvicorn's own signal capture would take SIGINT/SIGTERM from the stdio server while the page is bound
        self.uvicorn: uvicorn.Server = sdk_seams.quiet_uvicorn(config)
        self.stopped = anyio.Event()

    async def run(self, expire: Callable[[], Any]) -> None:
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(expire)
                await self.uvicorn.serve(sockets=[self.socket])
                tasks.cancel_scope.cancel()
        finally:
            self.socket.close()
            self.stopped.set()


class Halaman:
    """The page of this stdio server: which usulan wait on it (id → expiry), and its binding while any does."""

    def __init__(
        self,
        book: Konfirmasi,
        reader: ScopedReader,
        tasks: TaskGroup,
        auditor: Auditor | None = None,
        opener: Callable[[str], bool] = lambda url: webbrowser.open(url, new=2),
    ) -> None:
        self.book, self.reader, self.tasks, self.auditor, self.opener = book, reader, tasks, auditor, opener
        self.waiting: dict[str, float] = {}
        self.server: _Server | None = None
        self._lock = anyio.Lock()
        self.app = Starlette(
            routes=[
                Route("/usulan/{id}", self.page, methods=["GET"]),
                Route("/usulan/{id}/pertanyaan", self.question, methods=["POST"]),
                Route("/usulan/{id}/keputusan", self.decide, methods=["POST"]),
            ]
        )

    @property
    def port(self) -> int | None:
        """The bound port, None while nothing waits."""
        return self.server.port if self.server is not None and not self.server.stopped.is_set() else None

    async def buka(self, id_usulan: str, rahasia: str) -> None:
        """Serve the usulan on the page (binding it if need be) and open it in the person's browser; a ToolError
        when no browser opens it."""
        usulan = await self.book.store.ambil(id_usulan)
        self.waiting[id_usulan] = usulan.sampai if usulan is not None else time.time() + self.book.menit * 60
        server = await self._bound()
        url = f"{server.origin}/usulan/{id_usulan}#{rahasia}"
        opened = True  # a browser $BROWSER starts in the foreground answers only when it ends: it did open
        with anyio.move_on_after(OPEN_WAIT):
            opened = await anyio.to_thread.run_sync(self.opener, url, abandon_on_cancel=True)
        if not opened:
            log.warning("no browser opened the confirmation page", extra={"port": server.port})
            self.waiting.pop(id_usulan, None)
            await self.settle()
            raise ToolError(NO_BROWSER)
        log.info("confirmation page opened in the browser", extra={"port": server.port})

    async def _bound(self) -> _Server:
        """The running binding, or a new one (after the previous one finished closing)."""
        async with self._lock:
            if self.server is not None and self.server.uvicorn.should_exit:
                await self.server.stopped.wait()
                self.server = None
            if self.server is None:
                self.server = _Server(self.app)
                self.tasks.start_soon(self.server.run, self._expire)
            return self.server

    async def _expire(self) -> None:
        """Close the binding once the last waiting usulan has expired (decisions settle it themselves)."""
        while True:
            soonest = min(self.waiting.values(), default=time.time())
            await anyio.sleep(max(0.05, soonest - time.time() + 0.05))
            await self.settle()

    async def settle(self) -> None:
        """Forget the usulan no longer waiting (decided, expired, gone); close the binding when none is left."""
        for id_usulan in list(self.waiting):
            usulan = await self.book.store.ambil(id_usulan)
            if usulan is None or usulan.kedaluwarsa() or await self.book.store.putusan(id_usulan) is not None:
                self.waiting.pop(id_usulan, None)
        if not self.waiting and self.server is not None and not self.server.uvicorn.should_exit:
            self.server.uvicorn.should_exit = True
            log.info("confirmation page closed: no proposal waits", extra={"port": self.server.port})

    async def tutup(self) -> None:
        """Close the binding (the end of the server's lifespan)."""
        self.waiting.clear()
        server = self.server
        if server is not None:
            server.uvicorn.should_exit = True
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await server.stopped.wait()

    async def _own(self, id_usulan: str, rahasia: str) -> Usulan | str:
        """The usulan if `rahasia` is its page's secret, else the refusal's message."""
        usulan = await self.book.store.ambil(id_usulan)
        if usulan is None or usulan.subject != LOCAL_SUBJECT:
            return NOT_FOUND
        if usulan.saluran != "halaman" or not matches(rahasia, usulan.halaman):
            return WRONG_KEY
        return usulan

    async def page(self, request: Request) -> Response:
        if not re.fullmatch(ID, request.path_params["id"]):
            return _json(404, pesan=NOT_FOUND)
        return HTMLResponse(DOCUMENT, headers={**HEADERS, "Content-Security-Policy": CSP})

    async def question(self, request: Request) -> Response:
        asked = await _body(request, Pertanyaan)
        if asked is None:
            return _json(400, pesan=INVALID)
        usulan = await self._own(request.path_params["id"], asked.rahasia)
        if isinstance(usulan, str):
            return _json(403, pesan=usulan)
        decided = await self.book.store.putusan(usulan.id)
        status = decided.status if decided else "kedaluwarsa" if usulan.kedaluwarsa() else "menunggu"
        return _json(200, status=status, pesan=PESAN[status], pertanyaan=usulan.pertanyaan)

    def _event(self) -> AbstractAsyncContextManager[dict[str, Any]]:
        if self.auditor is None:
            return _unaudited()
        return self.auditor.event("usulan/halaman", LOCAL_SUBJECT, "halaman")

    async def decide(self, request: Request) -> Response:
        """The person's decision; afterwards the page settles (and closes when nothing waits any more)."""
        answer = await self._decided(request)
        answer.background = BackgroundTask(self.settle)
        return answer

    async def _decided(self, request: Request) -> Response:
        id_usulan = request.path_params["id"]
        asked = await _body(request, Keputusan)
        if asked is None:
            return _json(400, pesan=INVALID)
        try:
            async with self._event() as line:
                line["arguments"] = {"id_usulan": id_usulan[:64], "keputusan": asked.keputusan}
                own = await self._own(id_usulan, asked.rahasia)
                line["target"] = own.tool if isinstance(own, Usulan) else None
                answer, secret = await putuskan(
                    self.book, self.reader, LOCAL_SUBJECT, id_usulan, asked.rahasia, asked.keputusan, "halaman"
                )
        except ToolError as exc:
            return _json(403 if str(exc) in (NOT_FOUND, WRONG_KEY) else 409, pesan=str(exc))
        except Unrecorded:
            return _json(503, pesan=WITHHELD)
        except AsramaError as exc:
            log.info("page decision failed on the data service", extra={"error": type(exc).__name__})
            return _json(503, pesan=service_message(exc))
        except Exception as exc:  # masked: never a traceback or a message that could name a child
            log.error("page decision crashed", extra={"error": type(exc).__name__})
            return _json(500, pesan=INTERNAL_ERROR)
        if answer.id_usulan_baru and secret is not None:
            fresh = await self.book.store.ambil(answer.id_usulan_baru)
            self.waiting[answer.id_usulan_baru] = fresh.sampai if fresh else time.time()
        more = {"id_usulan_baru": answer.id_usulan_baru, "pertanyaan": answer.pertanyaan, "rahasia_baru": secret}
        return _json(200, status=answer.status, pesan=answer.pesan, **more)
