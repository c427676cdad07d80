"""Tools for people: the raw JSON-RPC probe and the Claude Desktop config generator."""
