"""mcp-asrama: a boarding school's student data for AI assistants, over MCP, safely."""

# The one place of the version: pyproject.toml reads it from here (setuptools `dynamic`, statically), so no start
# of the server pays for importlib.metadata.
__version__ = "0.1.0"
