#!/usr/bin/env bash
# Print the path of an nginx binary for the replica tests (scripts/cluster.sh runs it without root on free ports).
# Installs Debian's nginx-light when none is found (its service is not what we run; it may start on port 80). Usage:
#   export ASRAMA_TEST_NGINX=$(bash scripts/nginx-for-tests.sh)
set -euo pipefail

if ! command -v nginx >/dev/null 2>&1; then
  echo "installing nginx (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq nginx-light >&2
fi
command -v nginx
