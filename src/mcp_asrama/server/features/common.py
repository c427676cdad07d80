"""What every domain module shares: the result base (allowlist), annotations, the no-access note, and how a tool
is registered."""

import inspect
from collections.abc import Callable
from typing import Any

from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

from mcp_asrama.server.core import AsramaServer

NO_ACCESS = "Token Anda tidak memberi akses ke data anak mana pun; minta admin memeriksa wewenang Anda."
JSON = "application/json"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class Result(BaseModel):
    """A tool's result, its `outputSchema` and its allowlist: a field not declared never leaves."""

    model_config = ConfigDict(extra="ignore")


def add_tools(server: AsramaServer, tools: dict[Callable[..., Any], str], annotations: ToolAnnotations) -> None:
    """Register `tools` (function → title) in the given order; the description is the docstring on one line."""
    for fn, title in tools.items():
        description = " ".join(inspect.cleandoc(fn.__doc__ or "").split())
        server.tool(title=title, description=description, annotations=annotations)(fn)
