#!/usr/bin/env bash
# WRANGLER_DOCKER_BIN for `wrangler dev` with containers on a Docker engine without buildx and without a
# registry (Debian's docker.io 20.10, legacy builder):
#  - `build`: drops the buildx-only flags wrangler passes (--load, --provenance=false);
#  - `pull <image>`: succeeds without a registry when the image is already here (the sidecar stand-in).
# Everything else goes to Debian's docker CLI unchanged.
set -euo pipefail
docker=/usr/bin/docker

# Global options (wrangler passes --host <socket>) come before the command.
global=()
while [ $# -gt 0 ] && [[ "$1" == -* ]]; do
  case "$1" in
    -H | --host | --config | --context | -c | -l | --log-level) global+=("$1" "$2") && shift 2 ;;
    *) global+=("$1") && shift ;;
  esac
done
command="${1:-}"
[ $# -gt 0 ] && shift

case "$command" in
  build)
    args=()
    for arg in "$@"; do
      case "$arg" in
        --load | --provenance=false) ;;
        *) args+=("$arg") ;;
      esac
    done
    DOCKER_BUILDKIT=0 exec "$docker" "${global[@]}" build "${args[@]}"
    ;;
  pull)
    image="" && args=("$@")
    for ((i = 0; i < ${#args[@]}; i++)); do
      case "${args[i]}" in
        --platform | -a) i=$((i + 1)) ;;
        -*) ;;
        *) image="${image:-${args[i]}}" ;;
      esac
    done
    if [ -n "$image" ] && "$docker" "${global[@]}" image inspect "$image" >/dev/null 2>&1; then exit 0; fi
    exec "$docker" "${global[@]}" pull "$@"
    ;;
  *) exec "$docker" "${global[@]}" ${command:+"$command"} "$@" ;;
esac
