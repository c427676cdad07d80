#!/usr/bin/env bash
# Print the path of a redis-server binary for the test suite (each test starts its own on a free port).
# Installs Debian's redis-server when none is found. Usage:
#   export ASRAMA_TEST_REDIS_SERVER=$(bash scripts/redis-for-tests.sh)
set -euo pipefail

if ! command -v redis-server >/dev/null 2>&1; then
  echo "installing redis-server (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq redis-server >&2
fi
command -v redis-server
