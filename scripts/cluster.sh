#!/usr/bin/env bash
# The replica topology on one machine, for tests and demos: PostgreSQL, Redis, 2 data service replicas, 2 MCP
# replicas (Streamable HTTP, writes on, no auth: loopback only) and nginx running deploy/nginx/asrama.conf with free
# ports and this state dir's paths substituted: the tested config is the shipped one.
#
#   scripts/cluster.sh up              start everything, wait until healthy, print KEY=VALUE lines on stdout
#   scripts/cluster.sh down            stop everything this state dir started (idempotent)
#   scripts/cluster.sh kill NAME       SIGKILL one process (postgres: an immediate shutdown)
#   scripts/cluster.sh start NAME      start it again, wait until healthy, print its PID_ line
#   scripts/cluster.sh restart NAME    kill, then start
#   NAME: service-1 service-2 mcp-1 mcp-2 nginx redis postgres
#
# State (ports, logs, audit files, pid files, the database cluster) lives in ASRAMA_CLUSTER_DIR (default
# /tmp/mcp-asrama-cluster; as root the database cluster is beside it in /tmp); `up` prints MCP_URL, SERVICE_URL, SERVICE_TOKEN, DB_URL, AUDIT_LOGS and PID_<NAME>.
# Everything else goes to stderr. Needs the project's .venv (make install) or MCP_ASRAMA=/path/to/mcp-asrama.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${ASRAMA_CLUSTER_DIR:-/tmp/mcp-asrama-cluster}"
exe="${MCP_ASRAMA:-$root/.venv/bin/mcp-asrama}"
python="$(dirname "$exe")/python"
REPLICAS=(service-1 service-2 mcp-1 mcp-2)
# PostgreSQL runs as its own user when we are root: its cluster then lives outside the state dir, whose parents
# (a pytest tmp folder, a home) it may not be allowed to enter.
if [ "$(id -u)" = 0 ]; then pg="/tmp/mcp-asrama-cluster-pg-$(printf %s "$dir" | md5sum | cut -c1-12)"; else pg="$dir/pg"; fi

say() { echo "cluster: $*" >&2; }
die() { say "$*"; exit 1; }
pid_of() { cat "$dir/pid/$1" 2>/dev/null || true; }
running() { [ -n "$1" ] && [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }  # a zombie is gone
alive() { running "$(pid_of "$1")"; }
stop_pid() {  # PID SIGNAL SECONDS: send SIGNAL, wait up to SECONDS for it to end; then SIGKILL and wait
  kill "-$2" "$1" 2>/dev/null || return 0
  for _ in $(seq $(($3 * 10))); do running "$1" || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  while running "$1"; do sleep 0.05; done
}
key() { echo "PID_$(echo "$1" | tr 'a-z-' 'A-Z_')"; }

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_http() {  # URL NAME: until URL answers 200 (or NAME's process dies)
  local deadline=$((SECONDS + 60))
  until curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; do
    alive "$2" || die "$2 exited: see $dir/log/$2.log"
    [ $SECONDS -lt $deadline ] || die "$2 not healthy after 60 s ($1): see $dir/log/$2.log"
    sleep 0.2
  done
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

write_runner() {  # NAME COMMAND...: the process's command line with its environment, kept for `start NAME`
  local name="$1"; shift
  {
    echo "#!/usr/bin/env bash"
    echo "set -a; . '$dir/cluster.env'; set +a"
    printf 'exec'; printf ' %q' "$@"; echo
  } > "$dir/run/$name"
}

launch() {  # NAME: run its runner in the background, its stderr and stdout to log/NAME.log
  nohup bash "$dir/run/$1" >> "$dir/log/$1.log" 2>&1 < /dev/null &
  echo $! > "$dir/pid/$1"
}

health_url() {
  . "$dir/ports.env"
  case "$1" in
    service-1) echo "http://127.0.0.1:$SERVICE_1_PORT/healthz" ;;
    service-2) echo "http://127.0.0.1:$SERVICE_2_PORT/healthz" ;;
    mcp-1) echo "http://127.0.0.1:$MCP_1_PORT/readyz" ;;
    mcp-2) echo "http://127.0.0.1:$MCP_2_PORT/readyz" ;;
    nginx) echo "http://127.0.0.1:$NGINX_SERVICE_PORT/healthz" ;;  # the MCP entry needs the MCP replicas
  esac
}

start_one() {  # NAME: start it (again) and wait until it is healthy
  local name="$1"
  case "$name" in
    postgres)
      as_pg "$(pg_bin)/pg_ctl" -D "$pg" -l "$pg/server.log" -w restart >> "$dir/log/postgres.log" 2>&1  # postmaster.opts
      head -n 1 "$pg/postmaster.pid" > "$dir/pid/postgres" ;;
    redis)
      launch redis
      . "$dir/ports.env"
      until "$(dirname "$(cat "$dir/redis-server")")/redis-cli" -p "$REDIS_PORT" ping >/dev/null 2>&1; do
        alive redis || die "redis exited: see $dir/log/redis.log"; sleep 0.1
      done ;;
    service-* | mcp-* | nginx)
      alive "$name" && die "$name is already running"
      launch "$name"; wait_http "$(health_url "$name")" "$name" ;;
    *) die "unknown name '$name' (service-1 service-2 mcp-1 mcp-2 nginx redis postgres)" ;;
  esac
  echo "$(key "$name")=$(pid_of "$name")"
}

kill_one() {  # NAME: SIGKILL (postgres: an immediate shutdown, as a crash would)
  local name="$1"
  if [ "$name" = postgres ]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$pg" -m immediate -w stop >/dev/null 2>&1 || true
    return
  fi
  [ -f "$dir/pid/$name" ] || die "unknown name '$name'"
  stop_pid "$(pid_of "$name")" KILL 0
}

render_nginx() {  # deploy/nginx/asrama.conf with this cluster's ports and paths, inside a main config of its own
  . "$dir/ports.env"
  mkdir -p "$dir/nginx/temp"
  sed -e "s/127\.0\.0\.1:8201/127.0.0.1:$MCP_1_PORT/; s/127\.0\.0\.1:8202/127.0.0.1:$MCP_2_PORT/" \
      -e "s/127\.0\.0\.1:8101/127.0.0.1:$SERVICE_1_PORT/; s/127\.0\.0\.1:8102/127.0.0.1:$SERVICE_2_PORT/" \
      -e "s/listen 80;/listen 127.0.0.1:$NGINX_MCP_PORT;/; /listen \[::\]:80;/d" \
      -e "s/listen 127\.0\.0\.1:8000;/listen 127.0.0.1:$NGINX_SERVICE_PORT;/" \
      -e "s|/var/log/nginx/|$dir/log/nginx-|" \
      "$root/deploy/nginx/asrama.conf" > "$dir/nginx/asrama.conf"
  for port in "$MCP_1_PORT" "$MCP_2_PORT" "$SERVICE_1_PORT" "$SERVICE_2_PORT" "$NGINX_MCP_PORT" "$NGINX_SERVICE_PORT"; do
    grep -q "127.0.0.1:$port" "$dir/nginx/asrama.conf" || die "deploy/nginx/asrama.conf no longer has a port to render"
  done
  cat > "$dir/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/log/nginx-main.error.log;
events { worker_connections 1024; }
http {
    client_body_temp_path $dir/nginx/temp/body;
    proxy_temp_path $dir/nginx/temp/proxy;
    fastcgi_temp_path $dir/nginx/temp/fastcgi;
    uwsgi_temp_path $dir/nginx/temp/uwsgi;
    scgi_temp_path $dir/nginx/temp/scgi;
    access_log off;
    include $dir/nginx/asrama.conf;
}
EOF
  nginx -t -q -p "$dir/nginx" -c "$dir/nginx/nginx.conf" 2>> "$dir/log/nginx.log" || die "nginx -t failed: see $dir/log/nginx.log"
}

cmd_up() {
  for name in "${REPLICAS[@]}" nginx redis; do alive "$name" && die "already up in $dir: run down first"; done
  [ -x "$exe" ] || die "no $exe: run make install, or set MCP_ASRAMA"
  command -v nginx >/dev/null || die "nginx is not installed: bash scripts/nginx-for-tests.sh"
  if [ -e "$dir" ] && [ ! -f "$dir/cluster.env" ] && [ -n "$(ls -A "$dir")" ]; then
    die "$dir is not empty and holds no cluster: set ASRAMA_CLUSTER_DIR to a new folder"
  fi
  rm -rf "$dir"; mkdir -p "$dir"/{pid,log,run,data}
  chmod 700 "$dir"

  if [ -f "$pg/postmaster.pid" ]; then as_pg "$(pg_bin)/pg_ctl" -D "$pg" -m fast -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$pg"  # a fresh database cluster every time (postgres-for-tests.sh would reuse a running one)
  local pg_port; pg_port="$(free_port)"
  local db_url
  db_url="$(ASRAMA_TEST_PG_PORT="$pg_port" ASRAMA_TEST_PG_DIR="$pg" bash "$root/scripts/postgres-for-tests.sh")"
  head -n 1 "$pg/postmaster.pid" > "$dir/pid/postgres"
  say "postgresql on 127.0.0.1:$pg_port"
  bash "$root/scripts/redis-for-tests.sh" > "$dir/redis-server"

  {
    for name in REDIS SERVICE_1 SERVICE_2 MCP_1 MCP_2 NGINX_MCP NGINX_SERVICE; do echo "${name}_PORT=$(free_port)"; done
  } > "$dir/ports.env"
  . "$dir/ports.env"
  local token keys
  token="$("$python" -c 'import secrets; print(secrets.token_urlsafe(32))')"
  keys="$("$python" -c 'import secrets; print(secrets.token_urlsafe(32))')"
  cat > "$dir/cluster.env" <<EOF
ASRAMA_DB_URL=$db_url
ASRAMA_SERVICE_TOKEN=$token
ASRAMA_API_TOKEN=$token
ASRAMA_API_URL=http://127.0.0.1:$NGINX_SERVICE_PORT
ASRAMA_WRITES=on
ASRAMA_STATE_KEYS=$keys
ASRAMA_CONFIRM_STORAGE=redis://127.0.0.1:$REDIS_PORT/0
ASRAMA_RATE_LIMIT_STORAGE=redis://127.0.0.1:$REDIS_PORT/1
XDG_DATA_HOME=$dir/data
EOF
  chmod 600 "$dir/cluster.env"

  write_runner redis "$(cat "$dir/redis-server")" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$dir"
  write_runner service-1 env ASRAMA_SERVICE_PORT="$SERVICE_1_PORT" "$exe" service --demo
  write_runner service-2 env ASRAMA_SERVICE_PORT="$SERVICE_2_PORT" "$exe" service
  for n in 1 2; do
    local port_var="MCP_${n}_PORT"
    write_runner "mcp-$n" env ASRAMA_MCP_PORT="${!port_var}" ASRAMA_AUDIT_LOG="$dir/audit-$n.jsonl" \
      "$exe" serve --transport http
  done
  render_nginx
  write_runner nginx nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -g "daemon off;"

  local lines=()
  lines+=("$(start_one redis)")
  lines+=("$(start_one service-1)")  # fills the empty database with the demo school first; then the others
  say "data service replica 1 up (demo data)"
  for name in service-2 nginx mcp-1 mcp-2; do lines+=("$(start_one "$name")"); say "$name up"; done
  wait_http "http://127.0.0.1:$NGINX_MCP_PORT/readyz" nginx
  echo "MCP_URL=http://127.0.0.1:$NGINX_MCP_PORT/mcp"
  echo "SERVICE_URL=http://127.0.0.1:$NGINX_SERVICE_PORT"
  echo "SERVICE_TOKEN=$token"
  echo "DB_URL=$db_url"
  echo "AUDIT_LOGS=$dir/audit-1.jsonl,$dir/audit-2.jsonl"
  echo "PID_POSTGRES=$(pid_of postgres)"
  printf '%s\n' "${lines[@]}"
}

cmd_down() {
  [ -d "$dir" ] || { say "nothing up in $dir"; return 0; }
  local name pid
  for name in nginx mcp-1 mcp-2 service-1 service-2 redis; do
    pid="$(pid_of "$name")"
    [ -z "$pid" ] || stop_pid "$pid" TERM 5
  done
  if [ -f "$pg/postmaster.pid" ]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$pg" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$pg" "$dir/pid"
  say "down (logs and audit files kept in $dir)"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  kill) kill_one "${2:?name}" ;;
  start) start_one "${2:?name}" ;;
  restart) kill_one "${2:?name}"; start_one "$2" ;;
  *) echo "usage: $0 up | down | kill NAME | start NAME | restart NAME" >&2; exit 2 ;;
esac
