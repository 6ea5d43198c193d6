#!/usr/bin/env bash
# npm run test:container: the production path on this machine. Builds the engine image from
# containers/ffmpeg/Dockerfile as it is, runs the engine's own test suite inside it, then runs `wrangler dev`
# with containers enabled and drives every operation and a task through the Worker, its Durable Object and
# the Container binding (worker-path.ts). Needs root (network namespaces, dockerd); see README.md here.
#
# Bash, not TypeScript: this part is namespaces, daemons, mounts and a cleanup trap; the HTTP part is in
# TypeScript (worker-path.ts), run inside the namespace.
#
# Two phases around one Docker data root, kept between runs in $P6_DOCKER_CACHE (default /var/cache/p6-docker)
# so the base image and the build's layers are built once per machine:
#  1. build: dockerd in the machine's own network, without a bridge or iptables rules, builds the images
#     (`docker build --network host`: apt and npm need the network);
#  2. run: dockerd inside a network namespace of its own (only lo and docker0); the sources the engine fetches
#     are served on an address that exists only there. Nothing leaves the namespace.
set -euo pipefail
started=$SECONDS
repo="$(cd "$(dirname "$0")/../.." && pwd)"
here="$repo/scripts/test-container"
cache="${P6_DOCKER_CACHE:-/var/cache/p6-docker}"
docker=/usr/bin/docker
# Global unicast on purpose: the container never gets ALLOW_PRIVATE_SOURCES, and the SSRF guard refuses
# private, reserved and documentation ranges. It is assigned to lo inside the namespace only.
source_ip=11.0.0.7

step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }
fail() { printf 'test:container FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (network namespaces and dockerd); run it as root, as CI does"
[ "$(uname -m)" = x86_64 ] || fail "the base image is built for linux/amd64 only"

# --- Packages -----------------------------------------------------------------------------------------------
step "packages"
missing=()
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v nsenter >/dev/null || missing+=(util-linux)
command -v ip >/dev/null || missing+=(iproute2)
command -v openssl >/dev/null || missing+=(openssl)
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
NODE22="$(node "$repo/scripts/node22.mjs" --which)"
PATH="$(dirname "$NODE22"):$PATH"
export PATH
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false NO_UPDATE_NOTIFIER=1

# --- State and cleanup --------------------------------------------------------------------------------------
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 1800 9 || fail "another test:container run holds $cache"
run="$(mktemp -d /tmp/p6-container.XXXXXX)"
ns="p6c-$$"
dockerd_pid=""
worker_pid=""
host_suite_pid=""
export DOCKER_HOST="unix://$run/docker.sock"

stop_dockerd() {
  [ -n "$dockerd_pid" ] || return 0
  if kill -0 "$dockerd_pid" 2>/dev/null; then
    # Containers first (tini passes SIGTERM on), then the daemon; wait for the process, not the socket.
    "$docker" ps -aq 2>/dev/null | xargs -r "$docker" rm -f >/dev/null 2>&1 || true
    kill -TERM "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$dockerd_pid" 2>/dev/null || true
    while kill -0 "$dockerd_pid" 2>/dev/null; do sleep 0.1; done
  fi
  dockerd_pid=""
  # What dockerd and its containerd leave mounted under their roots (deepest first).
  awk -v a="$run/" -v b="$cache/" 'index($2, a) == 1 || index($2, b) == 1 { print $2 }' /proc/mounts |
    sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

cleanup() {
  local code=$?
  trap - EXIT INT TERM
  set +e
  [ -z "$worker_pid" ] || { kill -TERM -- "-$worker_pid" 2>/dev/null; wait "$worker_pid" 2>/dev/null; }
  [ -z "$host_suite_pid" ] || { kill -TERM -- "-$host_suite_pid" 2>/dev/null; wait "$host_suite_pid" 2>/dev/null; }
  stop_dockerd
  ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  rm -rf "$run"
  if [ "$code" = 0 ]; then
    printf '\ntest:container passed in %ds\n' $((SECONDS - started))
  else
    printf '\ntest:container FAILED (exit %s) after %ds\n' "$code" $((SECONDS - started)) >&2
  fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# dockerd with its own sockets, pid file and exec-root under $run; the data root is the cache.
start_dockerd() {
  local log="$run/dockerd-$1.log"
  shift
  echo '{}' >"$run/daemon.json"
  "$@" /usr/sbin/dockerd --config-file "$run/daemon.json" --host "$DOCKER_HOST" \
    --data-root "$cache/data" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" \
    "${dockerd_args[@]}" >"$log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 1 150); do
    "$docker" version >/dev/null 2>&1 && return 0
    kill -0 "$dockerd_pid" 2>/dev/null || { tail -20 "$log"; fail "dockerd exited"; }
    sleep 0.2
  done
  tail -20 "$log"
  fail "dockerd did not answer within 30 s"
}

# --- Phase 1: images ----------------------------------------------------------------------------------------
step "images (dockerd in the machine's network, no bridge)"
dockerd_args=(--bridge=none --iptables=false --ip-masq=false)
start_dockerd build env

# The engine suite as a host process, meanwhile: its pass count is compared with the count inside the image.
# TEST_CONTAINER_SUITES=0 leaves both suites out, for work on the later steps only (never in CI; said loudly).
suites="${TEST_CONTAINER_SUITES:-1}"
if [ "$suites" = 1 ]; then
  (cd "$repo" && NO_COLOR=1 exec setsid node node_modules/vitest/vitest.mjs run --project media-engine \
    --reporter=default --reporter=json --outputFile="$run/host-suite.json" >"$run/host-suite.log" 2>&1) &
  host_suite_pid=$!
fi

if ! "$docker" image inspect node:22-bookworm-slim >/dev/null 2>&1; then
  if [ ! -f "$cache/node-22-bookworm-slim.tar" ]; then
    echo "building the base image node:22-bookworm-slim (debootstrap + Node 22 + npm; once per machine)"
    bash "$here/base-image.sh" "$cache/node-22-bookworm-slim.tar"
  fi
  "$docker" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-extra.pem' \
    --change 'CMD ["node"]' \
    "$cache/node-22-bookworm-slim.tar" node:22-bookworm-slim >/dev/null
fi

echo "building the engine image from containers/ffmpeg/Dockerfile"
build_log="$run/engine-build.log"
if ! DOCKER_BUILDKIT=0 "$docker" build --network host -f "$repo/containers/ffmpeg/Dockerfile" \
  -t p6-media-engine:test "$repo" >"$build_log" 2>&1; then
  tail -30 "$build_log"
  fail "the engine image did not build"
fi
context="$(tr '\r' '\n' <"$build_log" | sed -n 's/^Sending build context to Docker daemon *//p' | tail -1)"
echo "build context: $context (.dockerignore)"
case "$context" in *kB | *B) ;; *) fail "the build context is $context: .dockerignore lets too much in" ;; esac
"$docker" image ls p6-media-engine:test --format 'engine image: {{.Repository}}:{{.Tag}} {{.Size}}'

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=p6-sidecar-stand-in \
  -keyout /dev/null -out "$here/sidecar/ca.pem" 2>/dev/null
DOCKER_BUILDKIT=0 "$docker" build -q -t p6-proxy-everything:local "$here/sidecar" >/dev/null
rm -f "$here/sidecar/ca.pem"
# wrangler's per-run tags from earlier runs. No `image prune`: the deps stage's image is untagged, and it is
# the cache that lets wrangler's own build inside the namespace (no network) skip `npm install`.
"$docker" images --format '{{.Repository}}:{{.Tag}}' | grep '^cloudflare-dev/' | xargs -r "$docker" rmi >/dev/null || true
stop_dockerd

# --- Phase 2: run, inside the namespace ----------------------------------------------------------------------
step "network namespace $ns and dockerd inside it"
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" addr add "$source_ip/32" dev lo
in_ns=(nsenter "--net=/var/run/netns/$ns")
# --bip: a fresh docker0 otherwise has no gateway in its IPAM config, and workerd fails to start containers.
dockerd_args=(--bip 172.17.0.1/16)
start_dockerd run "${in_ns[@]}"
ip -n "$ns" -brief link | awk '{ print "  " $1 }'

step "the engine image: /healthz, then the engine's test suite inside it as node"
engine_secret="$(openssl rand -hex 24)"
mkdir -p "$run/out" && chmod 777 "$run/out"
# The suite also runs the npm-shipped ffmpeg/ffprobe builds; @ffprobe-installer ships its binary as 0744, which
# only root may run: `node` gets an executable copy mounted over it (the checkout itself is left as it is).
mounts=(-v "$repo:/repo:ro" -v "$run/out:/out")
for bin in "$repo"/node_modules/@ff*-installer/linux-x64/ff*; do
  [ -f "$bin" ] || continue
  copy="$run/npm-bin/$(basename "$(dirname "$(dirname "$bin")")")-$(basename "$bin")"
  mkdir -p "$run/npm-bin" && cp "$bin" "$copy" && chmod 755 "$copy"
  mounts+=(-v "$copy:/repo/${bin#"$repo"/}:ro")
done
"$docker" run -d --name p6c-engine -e ENGINE_SECRET="$engine_secret" "${mounts[@]}" p6-media-engine:test >/dev/null
engine_ip="$("$docker" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' p6c-engine)"
t0=$SECONDS
for _ in $(seq 1 300); do
  "${in_ns[@]}" node -e "fetch('http://$engine_ip:8080/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))" && break
  sleep 0.1
done
"${in_ns[@]}" node -e "fetch('http://$engine_ip:8080/healthz').then(async r => { console.log('healthz', r.status, await r.text()); process.exit(r.ok ? 0 : 1) }, () => process.exit(1))" ||
  { "$docker" logs p6c-engine | tail -20; fail "the engine container did not answer /healthz"; }
echo "healthy $((SECONDS - t0)) s after docker run"

if [ "$suites" != 1 ]; then
  echo "ENGINE SUITES SKIPPED (TEST_CONTAINER_SUITES=$suites): this run proves less than test:container should"
else
# The host run first: two suites at once on two cores would slow both (a few engine tests assert durations).
echo "waiting for the host run of the engine suite"
wait "$host_suite_pid" || { tail -60 "$run/host-suite.log"; host_suite_pid=""; fail "the engine suite failed as a host process"; }
host_suite_pid=""
# The suite as the image runs the engine: its Node, Debian's ffmpeg, user node. The checkout is mounted
# read-only (the suite and vitest); the suite writes only to the container's /tmp.
if ! "$docker" exec -u node -w /repo/containers/ffmpeg -e NO_COLOR=1 -e CI=true p6c-engine \
  node /repo/node_modules/vitest/vitest.mjs run --config vitest.config.ts --configLoader runner --no-cache \
  --reporter=default --reporter=json --outputFile=/out/container-suite.json >"$run/container-suite.log" 2>&1; then
  tail -60 "$run/container-suite.log"
  fail "the engine suite failed inside the container"
fi
grep -E '^ *(Test Files|Tests) ' "$run/container-suite.log" | sed 's/^/  container: /'
counts() { node -e "const r = require(process.argv[1]); console.log(r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests)" "$1"; }
read -r host_passed host_failed host_skipped < <(counts "$run/host-suite.json")
read -r box_passed box_failed box_skipped < <(counts "$run/out/container-suite.json")
echo "engine suite, host process: $host_passed passed, $host_failed failed, $host_skipped skipped"
echo "engine suite, in the image: $box_passed passed, $box_failed failed, $box_skipped skipped"
[ "$host_passed" = "$box_passed" ] || fail "the pass counts differ (host $host_passed, image $box_passed)"
fi
# The image's HEALTHCHECK (every 30 s, on $PORT) has run by now when the suite ran.
health="$("$docker" inspect -f '{{.State.Health.Status}}' p6c-engine)"
echo "HEALTHCHECK: $health"
[ "$suites" != 1 ] || [ "$health" = healthy ] || fail "the image's HEALTHCHECK says $health"
"$docker" rm -f p6c-engine >/dev/null

step "wrangler dev with containers: every operation and a task through the Container binding"
(cd "$repo" && exec setsid "${in_ns[@]}" env WRANGLER_DOCKER_BIN="$here/docker.sh" \
  MINIFLARE_CONTAINER_EGRESS_IMAGE=p6-proxy-everything:local P6_SOURCE_IP="$source_ip" P6_RUN_DIR="$run" \
  node scripts/test-container/worker-path.ts) &
worker_pid=$!
wait "$worker_pid" || { worker_pid=""; fail "the Worker → Container path"; }
worker_pid=""
leftover="$("$docker" ps -aq)"
[ -z "$leftover" ] || { "$docker" ps -a; fail "wrangler left containers behind"; }
