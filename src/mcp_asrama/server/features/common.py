"""What every domain module shares: the result base (allowlist), annotations, the no-access note, and how a tool
is registered."""

import inspect
from collections.abc import Callable
from datetime import date
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

from mcp_asrama.server.arguments import MAX_RANGE_DAYS
from mcp_asrama.server.core import AsramaServer, Needs

NO_ACCESS = "Token Anda tidak memberi akses ke data anak mana pun; minta admin memeriksa wewenang Anda."
JSON = "application/json"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# A new record (a violation, a deposit, a visit): each confirmed call adds one.
CREATES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


class Result(BaseModel):
    """A tool's result, its `outputSchema` and its allowlist: a field not declared never leaves."""

    model_config = ConfigDict(extra="ignore")


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
