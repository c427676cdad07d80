#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster on 127.0.0.1 for the test suite and print its URL on stdout.
# Installs Debian's postgresql when no server binaries are found. Usage:
#   export ASRAMA_TEST_PG_URL=$(bash scripts/postgres-for-tests.sh)
set -euo pipefail

port="${ASRAMA_TEST_PG_PORT:-54329}"
dir="${ASRAMA_TEST_PG_DIR:-/tmp/mcp-asrama-pg-$port}"

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

bin="$(find_bin)"
if [ -z "$bin" ]; then
  echo "installing postgresql (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql postgresql-contrib >&2
  bin="$(find_bin)"
fi

# initdb refuses to run as root: run the cluster as the postgres user (or the current one when not root).
run_as=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  run_as=(runuser -u postgres --)
fi

if [ -f "$dir/postmaster.pid" ] && "${run_as[@]}" "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
  :
else
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  "${run_as[@]}" "$bin/initdb" -D "$dir" -U postgres -A trust --no-sync >/dev/null
  "${run_as[@]}" "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off" start >/dev/null
fi
echo "postgresql+psycopg://postgres@127.0.0.1:$port/postgres"
