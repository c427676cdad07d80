"""What every domain module shares: the result bases (allowlist), annotations, the no-access note, how a tool is
registered, how a student's records are cut to the result budget, and one student's records as a resource."""

import inspect
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any, Self, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

from mcp_asrama.client.models import Anak
from mcp_asrama.contract import BY_NAME
from mcp_asrama.privacy import RESULT_BUDGET, fitting_count, json_text
from mcp_asrama.server.arguments import MAX_RANGE_DAYS, is_id
from mcp_asrama.server.asrama_server import AsramaServer, Needs
from mcp_asrama.server.guard.scoped import ScopedReader, scoped_reader

BAD_ID = "id anak tidak valid: 1–64 huruf, angka, '-', '_' atau '.'"
NO_ACCESS = "Token Anda tidak memberi akses ke data anak mana pun; minta admin memeriksa wewenang Anda."
JSON = "application/json"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# A new record (a violation, a deposit, a visit): each confirmed call adds one.
CREATES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


M = TypeVar("M", bound=BaseModel)


class Result(BaseModel):
    """A tool's result, its `outputSchema` and its allowlist: a field not declared never leaves."""

    model_config = ConfigDict(extra="ignore")


class HasilAnak(Result):
    """A result about one student: who first (id, name, class, room), then what."""

    id_anak: str
    nama: str
    kelas: str | None = None
    kamar: str | None = None

    @classmethod
    def tentang(cls, anak: Anak, **fields: Any) -> Self:
        return cls(id_anak=anak.id, nama=anak.nama, kelas=anak.kelas, kamar=anak.kamar, **fields)


def row_of(model: type[M], record: Any, id_as: str) -> M:
    """A service record as the output row `model` (only the fields it declares leave), its `id` named `id_as`."""
    return model.model_validate({**record.model_dump(), id_as: record.id})


def latest(rows: list[M], complete: bool, none: str, unit: str) -> tuple[list[M], str | None]:
    """A student's records (latest first) cut to the result budget, and the note: `none` recorded in the range,
    or how many of the latest `unit` are shown."""
    shown = fitting_count(rows, RESULT_BUDGET)
    notes = [] if rows else [f"Tidak ada {none} tercatat untuk anak ini dalam rentang itu."]
    if shown < len(rows) or not complete:
        notes.append(f"Daftar dipotong: {shown} dari {len(rows)} {unit} terbaru; persempit dengan dari/sampai.")
    return rows[:shown], " ".join(notes) or None


def totals(rekap: Any) -> dict[str, Any]:
    """The range and totals a summary of the service carries, for a result that repeats them."""
    return {"dari": rekap.dari, "sampai": rekap.sampai, "jumlah_anak": rekap.jumlah_anak, "total": rekap.total}


def add_tools(
    server: AsramaServer,
    tools: dict[Callable[..., Any], str],
    annotations: ToolAnnotations,
    meta: dict[str, Any] | None = None,
    needs: Needs | None = None,
) -> None:
    """Register `tools` (function → title) in the given order; the description is the docstring on one line, `meta`
    the tools' `_meta` (e.g. the link to an MCP Apps view). Their annotations say whether they write; `needs` what
    else their caller must be allowed (`clinic`; `writes` for a read-only tool that exists only beside the writes)."""
    for fn, title in tools.items():
        description = " ".join(inspect.cleandoc(fn.__doc__ or "").split())
        server.add_tool(fn, title=title, description=description, annotations=annotations, meta=meta, needs=needs)


def check_range(dari: date | None, sampai: date | None) -> None:
    """A date range the service accepts: `sampai` not before `dari`, at most `MAX_RANGE_DAYS` days."""
    if dari is not None and sampai is not None:
        if sampai < dari:
            raise ToolError("Argumen tidak valid: sampai harus sama dengan atau sesudah dari.")
        if (sampai - dari).days >= MAX_RANGE_DAYS:
            raise ToolError(f"Argumen tidak valid: rentang paling panjang {MAX_RANGE_DAYS} hari.")


def not_future(tanggal: date) -> None:
    """A record is of a day that has come."""
    if tanggal > date.today():
        raise ToolError("Argumen tidak valid: tanggal tidak boleh sesudah hari ini.")


def student_resource(
    name: str, read: Callable[[ScopedReader, str], Awaitable[BaseModel]], description: str
) -> Callable[[str, Context], Awaitable[str]]:
    """The resource `asrama://anak/{id_anak}/<name>`: `read(reader, id_anak)` as JSON, its tool error (a student
    not visible, a service without the domain) the resource's not-found; `description` its docstring."""

    async def resource(id_anak: str, ctx: Context) -> str:
        if not is_id(id_anak):
            raise ResourceNotFoundError(BAD_ID)
        try:
            return json_text(await read(scoped_reader(ctx), id_anak))
        except ToolError as exc:
            raise ResourceNotFoundError(str(exc)) from None

    resource.__name__ = resource.__qualname__ = f"{name}_resource"
    resource.__doc__ = description
    return resource


def publish(server: AsramaServer, domain: str, title: str, read: Callable[..., Awaitable[str]]) -> None:
    """Register `read` as the domain's resource, at the URI `contract.DOMAINS` declares for it (said once there)."""
    uri = BY_NAME[domain].resource
    assert uri is not None, f"contract.DOMAINS publishes no resource for {domain}"
    server.resource(uri, name=domain, title=title, mime_type=JSON)(read)
