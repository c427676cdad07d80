"""The baseline of bench/startup.py: a bare SDK `MCPServer` with one tool, nothing of ours.

python bench/bare_server.py                 # stdio
python bench/bare_server.py --http PORT     # stateless Streamable HTTP on 127.0.0.1:PORT (SDK + uvicorn)
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def cari_anak(nama: str) -> str:
    """Cari anak berdasarkan nama."""
    return nama


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", port=int(sys.argv[2]), stateless_http=True)
    else:
        server.run()
