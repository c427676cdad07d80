"""Which HTTP parser and event loop our processes run on: `ASRAMA_HTTP` (auto, h11, httptools) for both HTTP
servers (the data service and `serve --transport http`), `ASRAMA_LOOP` (auto, asyncio, uvloop) for every server
process, stdio included.

`auto` is httptools when it is installed (a dependency), else h11; and uvloop for the MCP server when it is
installed (a dependency wherever it has wheels: none for Windows), else asyncio; bench/mcp.py measures each
combination. A process that runs the data service (`service`, `demo`) stays on asyncio unless ASRAMA_LOOP=uvloop:
when the process runs out of file descriptors, asyncio leaves new connections waiting and serving.py counts the
failed accept() calls into a log line, whereas libuv (under uvloop) accepts and closes them, unlogged. Naming a
parser or loop that is not installed is a configuration error. Both are looked up without importing them.
"""

from importlib.util import find_spec
from typing import Any, Literal

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def installed(module: str) -> bool:
    return find_spec(module) is not None


class Stack(BaseSettings):
    """The HTTP parser and the event loop, from the environment."""

    model_config = SettingsConfigDict(env_prefix="ASRAMA_", extra="ignore")

    http: Literal["auto", "h11", "httptools"] = "auto"
    loop: Literal["auto", "asyncio", "uvloop"] = "auto"

    @field_validator("http", "loop")
    @classmethod
    def _installed(cls, value: str) -> str:
        if value in ("httptools", "uvloop") and not installed(value):
            raise ValueError(f"{value} is not installed (pip install {value}), or choose auto")
        return value

    @property
    def parser(self) -> Literal["h11", "httptools"]:
        if self.http == "auto":
            return "httptools" if installed("httptools") else "h11"
        return self.http

    def uvloop(self, data_service: bool = False) -> bool:
        """Whether a process runs on uvloop (`data_service`: it serves the data service)."""
        return self.loop == "uvloop" or (self.loop == "auto" and not data_service and installed("uvloop"))

    def backend_options(self, data_service: bool = False) -> dict[str, Any]:
        """anyio.run's `backend_options` for this loop."""
        return {"use_uvloop": True} if self.uvloop(data_service) else {}
