"""The MCP server: tools, resources and prompts over the data service, built on the official SDK."""
