"""`AsramaServer`: the SDK's `MCPServer` with the error channels and schemas this product needs.

- a tool failure is `isError: true` with a message we wrote: data-service failures mapped in `errors`,
  invalid arguments as one short line, anything unexpected masked and logged (never `str(e)`);
- an unknown tool or prompt, a prompt without its required arguments or with arguments it does not declare, is
  JSON-RPC `-32602`; a prompt that fails unexpectedly is a masked `-32603` in both eras (never `str(e)`);
- every tool's input schema is closed (`additionalProperties: false`) and unknown arguments are refused;
- the write tools are listed, and callable, only for a caller who may write; for anyone else they do not exist
  (the spec lets the list vary by authorization). Which tools write is said once, by each tool's own annotations
  at registration (any tool not annotated read-only writes: `write_tools`); a tool may also declare that it needs
  the writes (`needs="writes"`: read-only beside them, as `cek_usulan`) or clinic staff (`needs="clinic"`). Whether
  the caller has what a tool needs is the guard's answer (`permits`, set by `guard.chain.install`).
"""

import logging
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast, get_args, get_origin, get_type_hints

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ToolError,
    UnexpectedResourceError,
    UnexpectedToolError,
)
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR as INTERNAL_ERROR_CODE
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp

from mcp_asrama import sdk_seams
from mcp_asrama.client import AsramaClient, AsramaError
from mcp_asrama.privacy import json_of
from mcp_asrama.server.errors import INTERNAL_ERROR, arguments_message, service_message
from mcp_asrama.server.guard.access import SEMUA, Akses, Principal, current_principal
from mcp_asrama.server.guard.ratelimit import RateLimiter

log = logging.getLogger(__name__)
Needs = Literal["writes", "clinic"]

# The request being served by `read_resource`: static resources cannot declare a Context parameter.
_resource_request: ContextVar[Context[Any, Any]] = ContextVar("asrama_resource_request")


def resource_context() -> Context[Any, Any]:
    """The Context of the resource read in progress."""
    return _resource_request.get()


@dataclass(frozen=True)
class AppState:
    """What the lifespan owns for every request of the process."""

    client: AsramaClient
    scope_claim: str = "asrama_scope"
    local: Akses = SEMUA
    kesehatan_min_anak: int = 20  # ASRAMA_KESEHATAN_MIN_ANAK: the smallest group health counts are given for
    konfirmasi: Any = None  # the write path's `Konfirmasi` (features.write): channels, usulan store, write tools

    def principal(self) -> Principal:
        """Who is asking right now (token subject and scope, or the local operator)."""
        return current_principal(self.scope_claim, self.local)


def state_of(ctx: Context[Any, Any]) -> AppState:
    """What the lifespan owns."""
    return cast(AppState, ctx.request_context.lifespan_context)


def client_of(ctx: Context[Any, Any]) -> AsramaClient:
    """The data-service client the lifespan owns."""
    return state_of(ctx).client


def tool_result(model: BaseModel) -> CallToolResult:
    """`structuredContent` and the same JSON as compact text, without null fields (the model dumped once)."""
    structured = model.model_dump(mode="json", exclude_none=True)
    return CallToolResult(content=[TextContent(type="text", text=json_of(structured))], structured_content=structured)


def _returns_built_result(fn: Callable[..., Any]) -> bool:
    """Whether `fn` is declared to return `Annotated[CallToolResult, Model]`."""
    declared = get_type_hints(fn, include_extras=True).get("return")
    return get_origin(declared) is Annotated and get_args(declared)[0] is CallToolResult


def tool_error(message: str) -> CallToolResult:
    """A tool execution error the model can read and act on."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _names(names: list[str], limit: int = 5, width: int = 40) -> str:
    """Caller-chosen names, bounded: a few, each cut short (the caller may send anything)."""
    shown = ", ".join(n if len(n) <= width else n[: width - 1] + "…" for n in names[:limit])
    return shown + (f" (+{len(names) - limit} lagi)" if len(names) > limit else "")


def _unguarded(app: ASGIApp, endpoints: Callable[[ASGIApp], ASGIApp]) -> ASGIApp:
    raise RuntimeError("the guard chain is not installed (guard.chain.install)")


class AsramaServer(MCPServer[Any]):
    """MCPServer with strict tool schemas, protocol errors for unknown names, and masked failures.

    Set by `guard.chain.install`: `permits` (whether the caller of the request in progress has what a tool needs:
    nothing needed by default), `guard_http` (wraps the transport's app in the HTTP half of the guard chain: refused
    until installed), `limiter` (the rate limiter). `close_listens` ends the open `subscriptions/listen` streams
    (at shutdown).
    """

    _closed_tools: dict[str, Tool] | None = None
    _needs: dict[str, frozenset[Needs]]  # per tool: what its caller must be allowed (derived at registration)
    limiter: RateLimiter
    permits: Callable[[frozenset[Needs]], bool] = staticmethod(lambda needs: not needs)
    guard_http: Callable[[ASGIApp, Callable[[ASGIApp], ASGIApp]], ASGIApp] = staticmethod(_unguarded)
    close_listens: Callable[[], None] = staticmethod(lambda: None)  # ends every open listen stream gracefully

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._needs = {}
        self._writing: set[str] = set()
        super().__init__(*args, **kwargs)

    def needs_of(self, name: str) -> frozenset[Needs]:
        """What the caller of tool `name` must be allowed (nothing for a tool not registered)."""
        return self._needs.get(name, frozenset())

    @property
    def write_tools(self) -> frozenset[str]:
        """The tools that write: every tool not annotated read-only."""
        return frozenset(self._writing)

    def add_tool(self, fn: Callable[..., Any], *args: Any, needs: Needs | None = None, **kwargs: Any) -> None:
        """Register a tool (the `tool()` decorator comes here too); the closed list is rebuilt on next use. A tool
        not annotated read-only writes (listed only to a caller who may write); `needs` adds what else its caller
        must be allowed (`clinic`), or marks a read-only tool that exists only beside the writes (`writes`).

        A tool declared `-> Annotated[CallToolResult, Model]` builds its result from a `Model` (`tool_result`), so
        the SDK's validation of that structuredContent against `Model` on every call repeats pydantic's own work:
        its output model is dropped and its published outputSchema kept (`FuncMetadata` reads both fields live).
        The SDK has no public way to the registered Tool (`sdk_seams.drop_output_validation`).
        """
        super().add_tool(fn, *args, **kwargs)
        self._closed_tools = None
        name = kwargs.get("name") or (args[0] if args else None) or fn.__name__
        annotations: ToolAnnotations | None = kwargs.get("annotations")
        writes = annotations is None or annotations.read_only_hint is not True  # unannotated: assume it writes
        if writes:
            self._writing.add(name)
        required: set[Needs] = {"writes"} if writes else set()
        self._needs[name] = frozenset(required | ({needs} if needs else set()))
        if _returns_built_result(fn):
            sdk_seams.drop_output_validation(self, name)

    def remove_tool(self, name: str) -> None:
        """Unregister a tool."""
        super().remove_tool(name)
        self._closed_tools = None

    async def _tools(self) -> dict[str, Tool]:
        """The tools this caller may use by name, in registration order, each input schema closed and without its
        generated title."""
        if self._closed_tools is None:
            closed = {}
            for tool in await super().list_tools():
                schema = {k: v for k, v in tool.input_schema.items() if k != "title"}
                schema["additionalProperties"] = False
                closed[tool.name] = tool.model_copy(update={"input_schema": schema})
            self._closed_tools = closed
        return {
            name: tool for name, tool in self._closed_tools.items() if self.permits(self._needs.get(name, frozenset()))
        }

    async def list_tools(self) -> list[Tool]:
        """Tools in registration order (a fixed order: hosts cache the list), input schemas closed."""
        return list((await self._tools()).values())

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Run a tool, turning every failure into one of our two error channels."""
        tool = (await self._tools()).get(name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        unknown = sorted(set(arguments) - set(tool.input_schema.get("properties", {})))
        if unknown:
            return tool_error(f"Argumen tidak valid: argumen tidak dikenal: {_names(unknown)}")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            if isinstance(exc.__cause__, AsramaError):
                log.info(
                    "tool failed on the data service",
                    extra={"tool": name, "error": type(exc.__cause__).__name__},
                )
                return tool_error(service_message(exc.__cause__))
            log.error("tool crashed", exc_info=exc.__cause__, extra={"tool": name})
            return tool_error(INTERNAL_ERROR)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                return tool_error(arguments_message(cause, arguments))
            return tool_error(str(cause) if cause is not None else INTERNAL_ERROR)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        """Render a prompt; unknown names and missing required arguments are `-32602`."""
        prompt = next((p for p in await self.list_prompts() if p.name == name), None)
        if prompt is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {name}")
        declared = {a.name for a in prompt.arguments or []}
        missing = sorted(a.name for a in prompt.arguments or [] if a.required and a.name not in (arguments or {}))
        if missing:
            raise MCPError(code=INVALID_PARAMS, message=f"Missing required argument(s): {', '.join(missing)}")
        unknown = sorted(set(arguments or {}) - declared)
        if unknown:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown argument(s): {_names(unknown)}")
        try:
            return await super().get_prompt(name, arguments, context)
        except MCPError:
            raise
        except Exception as exc:
            log.error("prompt crashed", exc_info=exc, extra={"prompt": name})
            raise MCPError(code=INTERNAL_ERROR_CODE, message=f"Error rendering prompt {name}") from None

    async def read_resource(
        self, uri: Any, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        """Read a resource; data-service failures get our message, anything unexpected is masked and logged."""
        context = context or Context(mcp_server=self)
        token = _resource_request.set(context)
        try:
            return await super().read_resource(uri, context)
        except UnexpectedResourceError as exc:
            if isinstance(exc.__cause__, AsramaError):
                raise ResourceError(service_message(exc.__cause__)) from None
            log.error("resource read crashed", exc_info=exc.__cause__)
            raise ResourceError(INTERNAL_ERROR) from None
        finally:
            _resource_request.reset(token)
