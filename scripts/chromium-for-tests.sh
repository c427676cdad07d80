#!/usr/bin/env bash
# Print the path of a Chromium binary for the browser tests of the MCP Apps views (each test drives it headless over
# --remote-debugging-pipe: no port). Installs Debian's chromium when none is found. Usage:
#   export ASRAMA_TEST_CHROMIUM=$(bash scripts/chromium-for-tests.sh)
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq chromium >&2
fi
command -v chromium
