"""The confirmed-write path every write tool shares: plan → question → channel → decision → write once → audit.

A write tool declares one `Penulisan`: `rencana(reader, **arguments)` reads the data and builds the plan (or raises
a ToolError naming the problem), `pertanyaan(plan)` renders it as one deterministic question (None: nothing would
change, nobody is asked), `tulis(Tulis, plan)` writes it once and returns its result and the changes to audit.
`SPEC.as_tool(description)` is the tool's function: `rencana`'s arguments as it declares them (their types and
descriptions are the tool's input schema); its body runs the two resolvers (`SPEC.rencana`, `SPEC.keputusan`, the
SDK's `Resolve`) itself (`sdk_seams.Resolvers`), so that it can also answer the page's own `InputRequiredResult`,
then `SPEC.selesai`.

How the person decides (`ASRAMA_KONFIRMASI`, in order; the first the request's host can do is used):
- `formulir`: a form inside the call (2026-07-28: an `InputRequiredResult`; handshake era: `elicitation/create`);
- `tampilan`: the MCP Apps confirm view (`usulan_tools`): the call returns `menunggu` with an usulan, its `kunci`
  only in the result's `_meta`, and the view's button calls `putuskan_usulan`;
- `halaman`: a page in the person's own browser: opened by a local (stdio) server itself, or (`--auth sekolah`) the
  remote server's `/usulan/<id>`, which only the signed-in person the usulan is for can use: a URL-mode elicitation
  for a 2026-07-28 host that declares one (`write_url`), else linked in the result.
A host that can do none gets `-32021`, saying in plain words which apps can confirm and what turns the page on.
A decision on an usulan builds the plan again from the data as it is then (`putuskan`): a different question writes
nothing and asks again; the same one is written once, its Idempotency-Key derived from the usulan.
"""

import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeVar

from mcp.server.apps import client_supports_apps
from mcp.server.mcpserver import Context, ElicitationResult, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import AcceptedElicitation, Elicit
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY, CallToolResult, InputRequiredResult
from pydantic import Field, create_model
from pydantic_core import to_jsonable_python

from mcp_asrama import sdk_seams
from mcp_asrama.client import AsramaError, Changed
from mcp_asrama.server.asrama_server import state_of, tool_result
from mcp_asrama.server.features import write_url
from mcp_asrama.server.features.common import Result
from mcp_asrama.server.guard import audit, writes
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader
from mcp_asrama.server.guard.usulan import StoreFull, UsulanStore, baru
from mcp_asrama.server.settings import Saluran

P = TypeVar("P")
Hasil = Literal["ditulis", "ditolak", "dibatalkan", "tetap", "menunggu"]
META = "asrama/usulan"  # the result `_meta` key of the view's usulan: its id and its single-use `kunci`
CHANGED = (
    "Data berubah sejak pengguna menyetujui (orang lain mencatat lebih dulu); tidak ada yang dicatat. Panggil lagi "
    "agar pengguna melihat dan menyetujui keadaan terbaru."
)
NO_CHANNEL = (
    "Host ini tidak dapat menanyakan persetujuan pengguna, jadi tidak ada yang dicatat. Persetujuan bisa lewat "
    "formulir (VS Code, Cursor, Claude Code, Goose, MCP Inspector), lewat tampilan MCP Apps (claude.ai, Claude "
    "Desktop dengan konektor jarak jauh, ChatGPT, VS Code, Cursor, Goose), atau lewat halaman di peramban untuk "
    "server lokal (stdio): setel ASRAMA_KONFIRMASI=halaman (mcp-asrama claude-config --writes melakukannya)."
)
WAIT = (
    "Menunggu keputusan pengguna {where}. Jangan panggil tool tulis ini lagi; setelah pengguna memutuskan, "
    "periksa dengan cek_usulan(id_usulan)."
)
WHERE = {
    "tampilan": "pada tampilan persetujuan di percakapan (bila tidak muncul, aplikasi ini tidak dapat menampilkannya "
    "dan tidak ada yang dicatat)",
    "halaman": "pada halaman yang dibuka di peramban",
}
FULL = "Terlalu banyak usulan yang menunggu keputusan; tidak ada yang dicatat. Coba lagi nanti."


@dataclass(frozen=True)
class Pertanyaan:
    """What the person is asked (deterministic: no timestamps), and the students it names (a disclosure)."""

    teks: str
    anak: tuple[str, ...]
    kesehatan: bool = False  # it carries health details (a clinic visit): audited as a health disclosure

    def disclosed(self) -> None:
        """Declare the students it names to the audit (whatever the answer)."""
        (audit.disclose_health if self.kesehatan else audit.disclose)(self.anak)


@dataclass(frozen=True)
class Tulis:
    """What a write needs: the reader (its client), who writes, and the key that makes the service write once."""

    reader: ScopedReader
    actor: str
    key: str


@dataclass(frozen=True)
class Direncanakan(Generic[P]):
    """A plan and the arguments it was built from (kept in an usulan, to build it again when it is decided)."""

    plan: P
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Diusulkan:
    """The decision resolver's answer when the person decides outside the call, on `saluran`."""

    saluran: Saluran


class HasilTulis(Result):
    """What happened to a write: written, declined, cancelled, unchanged, or waiting for the person (an usulan)."""

    hasil: Hasil
    pesan: str
    id_usulan: str | None = Field(None, description="Usulan yang menunggu keputusan; periksa dengan cek_usulan")
    pertanyaan: str | None = Field(None, description="Pertanyaan yang diajukan kepada pengguna")


Ditulis = tuple[HasilTulis, list[dict[str, Any]]]  # the result, and the changes the audit keeps (ids, statuses)


class Penulisan(Generic[P]):
    """One write tool's declaration, and the resolvers its function takes (`rencana`, `keputusan`)."""

    def __init__(
        self,
        tool: str,
        rencana: Callable[..., Awaitable[P]],
        pertanyaan: Callable[[P], Pertanyaan | None],
        tulis: Callable[[Tulis, P], Awaitable[Ditulis]],
        hasil: type[HasilTulis],
        tetap: Callable[[P], HasilTulis] | None = None,
        conflict: str | None = None,
        not_found: str = "Layanan data asrama ini tidak mendukung pencatatan ini (butuh layanan mcp-asrama).",
        changed: str = CHANGED,
    ) -> None:
        self.tool, self.plan_of, self.question_of, self.write_of = tool, rencana, pertanyaan, tulis
        self.hasil, self.tetap, self.not_found, self.changed = hasil, tetap, not_found, changed
        self.conflict = conflict or f"Konfirmasi ini sudah dipakai; panggil {tool} lagi."
        parameters = list(inspect.signature(rencana).parameters.values())[1:]  # after the reader
        hints = inspect.get_annotations(rencana, eval_str=True)
        self.names, self._parameters, self._hints = [p.name for p in parameters], parameters, hints
        fields: dict[str, Any] = {
            p.name: (hints[p.name], ... if p.default is inspect.Parameter.empty else p.default) for p in parameters
        }
        self._arguments = create_model(f"Argumen_{tool}", **fields)
        self.rencana = Resolve(self._plan_resolver(parameters, hints))
        self.keputusan = Resolve(self._decision_resolver())
        resolved = {"rencana": (self.rencana, False), "keputusan": (self.keputusan, True)}
        self.resolvers = sdk_seams.Resolvers(resolved, set(self.names))

    def _plan_resolver(self, parameters: list[inspect.Parameter], hints: dict[str, Any]) -> Callable[..., Any]:
        """`rencana` as the SDK's resolver: the Context, then the tool's arguments by name (its own signature)."""

        async def resolve(ctx: Context, **arguments: Any) -> Direncanakan[P]:
            return Direncanakan(await self.plan_of(scoped_reader(ctx), **arguments), to_jsonable_python(arguments))

        context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
        kinds = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters]
        resolve.__signature__ = inspect.Signature([context, *kinds])  # type: ignore[attr-defined]
        resolve.__annotations__ = {"ctx": Context, **{p.name: hints[p.name] for p in parameters}}
        resolve.__qualname__ = f"rencana_{self.tool}"
        return resolve

    def _decision_resolver(self) -> Callable[..., Any]:
        """The person's decision: a form inside the call, an usulan for the view or the page, or nobody asked."""
        spec = self

        async def resolve(
            ctx: Context, rencana: Annotated[Direncanakan[Any], Resolve(self.rencana.fn)]
        ) -> Elicit[writes.Setuju] | Diusulkan | None:
            question = spec.question_of(rencana.plan)
            if question is None:
                return None
            saluran = channel(ctx)
            asked = writes.ask(ctx, question.teks, ()) if saluran == "formulir" else Diusulkan(saluran)
            question.disclosed()
            return asked

        resolve.__qualname__ = f"keputusan_{self.tool}"
        return resolve

    def as_tool(self, description: str) -> Callable[..., Awaitable[CallToolResult | InputRequiredResult]]:
        """The tool's function, named after the tool: `description` as its docstring, `rencana`'s arguments (keyword
        only, as `rencana` declares them), and `jalankan` as its body."""
        spec = self

        async def tool(ctx: Context, **arguments: Any) -> CallToolResult | InputRequiredResult:
            return await spec.jalankan(ctx, arguments)

        context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in self._parameters]
        returns = Annotated[CallToolResult, self.hasil] | InputRequiredResult
        tool.__signature__ = inspect.Signature([context, *own], return_annotation=returns)  # type: ignore[attr-defined]
        tool.__annotations__ = {"ctx": Context, **{p.name: self._hints[p.name] for p in own}, "return": returns}
        tool.__name__ = tool.__qualname__ = self.tool
        tool.__doc__ = description
        return tool

    def arguments(self, stored: dict[str, Any]) -> dict[str, Any]:
        """Stored arguments, typed again as the plan takes them."""
        typed = self._arguments.model_validate(stored)
        return {name: getattr(typed, name) for name in self.names}

    async def jalankan(self, ctx: Context, arguments: dict[str, Any]) -> CallToolResult | InputRequiredResult:
        """A round of the call: the page's retry (how its usulan stands), the SDK's question while a resolver asks,
        else `selesai`."""
        waiting = write_url.resumed(ctx)
        if waiting is not None:
            return await write_url.report(ctx, self, waiting)
        resolved = await self.resolvers.run(arguments, ctx)
        if isinstance(resolved, InputRequiredResult):
            return resolved
        return await self.selesai(ctx, resolved["rencana"], resolved["keputusan"])

    async def selesai(
        self, ctx: Context, rencana: Direncanakan[P], keputusan: ElicitationResult[Any]
    ) -> CallToolResult | InputRequiredResult:
        """The tool's body: nothing to change, an usulan to wait for, or the form's answer (written if accepted)."""
        question = self.question_of(rencana.plan)
        if question is None:
            audit.note_write("unchanged")
            assert self.tetap is not None, f"{self.tool}: a plan without a question needs `tetap`"
            return tool_result(self.tetap(rencana.plan))
        if isinstance(keputusan, AcceptedElicitation) and isinstance(keputusan.data, Diusulkan):
            return await propose(ctx, self, rencana, question, keputusan.data.saluran)
        answer = writes.answer_of(keputusan)
        if answer != "accepted":
            hasil, pesan = writes.not_written(answer)
            return tool_result(self.hasil(hasil=hasil, pesan=pesan))
        written = await self.write(Tulis(scoped_reader(ctx), writes.actor(ctx), writes.idempotency_key()), rencana.plan)
        audit.note_write("accepted", written[1], saluran="formulir")
        return tool_result(written[0])

    async def write(self, tulis: Tulis, plan: P) -> Ditulis:
        """Write once; a failure is a ToolError the model can act on (audited `failed` or `changed`)."""
        try:
            return await self.write_of(tulis, plan)
        except Changed:
            audit.note_write("changed")
            raise ToolError(self.changed) from None
        except AsramaError as exc:
            raise writes.write_failed(exc, conflict=self.conflict, not_found=self.not_found) from None


@dataclass
class Konfirmasi:
    """How this server confirms writes: the channels in order, the usulan store and lifetime, the write tools, and
    (stdio with `halaman`) the page that opens an usulan in the person's browser."""

    saluran: tuple[Saluran, ...]
    store: UsulanStore
    menit: float
    stdio: bool
    spesifikasi: dict[str, Penulisan[Any]] = field(default_factory=dict)
    halaman: Any = None  # a `Halaman` (confirm_page) once the stdio server opened one
    alamat: str | None = None  # --auth sekolah: the server's public origin, where `/usulan/<id>` is served

    def tambah(self, spec: Penulisan[Any]) -> None:
        self.spesifikasi[spec.tool] = spec


def konfirmasi_of(ctx: Context) -> Konfirmasi:
    """The server's `Konfirmasi` (the lifespan's)."""
    found = state_of(ctx).konfirmasi
    assert isinstance(found, Konfirmasi), "build_server sets AppState.konfirmasi"
    return found


def _form(ctx: Context) -> bool:
    """Whether the host declared form elicitation (a bare `elicitation: {}` counts, as in the SDK) and can be asked
    inside this call (2026-07-28, or a handshake-era connection that can hear the server)."""
    declared = ctx.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False
    return writes.modern(ctx) or ctx.session.can_send_request


def _unknown_host(ctx: Context) -> bool:
    """A handshake-era request on stateless HTTP: every POST is a new session, so what the host declared at
    `initialize` is not known here (remote connectors of claude.ai and Claude Desktop arrive so). It is offered the
    view: an usulan can only be decided with the key only a view receives, so a host that shows none writes
    nothing, and the result says so."""
    return not writes.modern(ctx) and ctx.session.client_params is None


def channel(ctx: Context) -> Saluran:
    """The first channel of ASRAMA_KONFIRMASI the request's host can do; when none, -32021, or a tool error for a
    handshake-era host on stateless HTTP (it cannot be asked inside the call, whatever it declares)."""
    book = konfirmasi_of(ctx)
    for saluran in book.saluran:
        if saluran == "tampilan" and (client_supports_apps(ctx) or _unknown_host(ctx)):
            return saluran
        if saluran == "formulir" and _form(ctx):
            return saluran
        if saluran == "halaman" and (book.stdio or book.alamat):
            return saluran
    audit.note_write("refused")
    if not writes.modern(ctx) and not ctx.session.can_send_request:  # handshake era on stateless HTTP
        raise ToolError(writes.NO_BACK_CHANNEL)
    raise MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=NO_CHANNEL,
        data={"requiredCapabilities": {"elicitation": {"form": {}}}},
    )


async def propose(
    ctx: Context, spec: Penulisan[Any], rencana: Direncanakan[Any], question: Pertanyaan, saluran: Saluran
) -> CallToolResult | InputRequiredResult:
    """Store an usulan for the person to decide on the view or the page; the result says to wait (or, for a host that
    can open a URL, the remote page's URL elicitation)."""
    book = konfirmasi_of(ctx)
    usulan, secret = baru(
        subject=writes.actor(ctx),
        tool=spec.tool,
        arguments=rencana.arguments,
        pertanyaan=question.teks,
        saluran=saluran,
        sampai=time.time() + book.menit * 60,
    )
    try:
        await book.store.simpan(usulan)
    except StoreFull:
        audit.note_write("refused")
        raise ToolError(FULL) from None
    audit.note_write("proposed", saluran=saluran)
    where = WHERE[saluran]
    if saluran == "halaman" and book.alamat:
        url = write_url.page_of(book, usulan.id)
        if write_url.asks_url(ctx):
            return write_url.ask(spec.tool, url, usulan.id)
        where = write_url.REMOTE_PAGE.format(url=url)
    elif saluran == "halaman":
        await book.halaman.buka(usulan.id, secret)
    waiting = WAIT.format(where=where)
    result = tool_result(spec.hasil(hasil="menunggu", pesan=waiting, id_usulan=usulan.id, pertanyaan=question.teks))
    if saluran == "tampilan":  # only the view gets the key: `_meta` is not for the model
        result.meta = {META: {"id": usulan.id, "kunci": secret}}
    return result


def tanya(lines: list[str], *anak: str, kesehatan: bool = False, **details: str | None) -> Pertanyaan:
    """The question of `lines`, then a line `Label: value` for each of `details` that is set, closed by asking for
    approval; it names the students `anak`."""
    shown = [f"{label}: {value}" for label, value in details.items() if value]
    return Pertanyaan("\n".join([*lines, *shown, "Setujui untuk mencatat?"]), anak, kesehatan=kesehatan)
