"""MCP methods by what they can reach: the guards (rate limits, audit) decide from the same list."""

# The handshake, liveness and the definition lists: no child's data, little work; a host must always be able to
# connect, see that the server is alive and learn what it offers.
NO_DATA_METHODS = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    }
)
