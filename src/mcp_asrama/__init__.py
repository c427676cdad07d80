"""mcp-asrama: a boarding school's student data for AI assistants, over MCP, safely."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mcp-asrama")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"
