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
#
# It cannot hang CI: every phase runs under a time limit of its own (TEST_CONTAINER_LIMIT_<PHASE>, seconds) and
# the whole run under TEST_CONTAINER_LIMIT (default 3600 s); a limit reached fails the run naming the phase and
# the variable that sets it, and the cleanup runs as on any other exit.
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
fail() {
  printf 'test:container FAILED: %s\n' "$*" >&2
  exit 1
}

# Time limits in seconds: generous (the measured times are in README.md; a loaded 2-core machine is slower).
limit_total="${TEST_CONTAINER_LIMIT:-3600}"
limit_packages="${TEST_CONTAINER_LIMIT_PACKAGES:-900}"
limit_base="${TEST_CONTAINER_LIMIT_BASE:-1200}"
limit_build="${TEST_CONTAINER_LIMIT_BUILD:-2400}"
limit_healthz="${TEST_CONTAINER_LIMIT_HEALTHZ:-180}"
limit_suite="${TEST_CONTAINER_LIMIT_SUITE:-2400}"
limit_worker="${TEST_CONTAINER_LIMIT_WORKER:-900}"

# Fails the run for a command's exit `code`: a time limit reached (timeout's 124, or 137 after its KILL) is
# said as such, naming the variable that sets it.
failed_with() {
  local code="$1" what="$2" seconds="$3" variable="$4"
  case "$code" in
    124 | 137) fail "$what did not finish within $seconds s (time limit; $variable sets it)" ;;
    *) fail "$what failed (exit $code)" ;;
  esac
}

# limit <seconds> <variable> <what> <command…>: the command, stopped (TERM, then KILL 15 s later) when it
# outlasts its limit.
limit() {
  local seconds="$1" variable="$2" what="$3" code=0
  shift 3
  timeout -k 15 "$seconds" "$@" || code=$?
  [ "$code" = 0 ] || failed_with "$code" "$what" "$seconds" "$variable"
}

[ "$(id -u)" = 0 ] || fail "needs root (network namespaces and dockerd); run it as root, as CI does"
[ "$(uname -m)" = x86_64 ] || fail "the base image is built for linux/amd64 only"

# --- Packages -----------------------------------------------------------------------------------------------
step "packages"
missing=()
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || missing+=(docker.io)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v nsenter >/dev/null || missing+=(util-linux)
command -v ip >/dev/null || missing+=(iproute2)
command -v openssl >/dev/null || missing+=(openssl)
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  limit "$limit_packages" TEST_CONTAINER_LIMIT_PACKAGES "apt-get update" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive limit "$limit_packages" TEST_CONTAINER_LIMIT_PACKAGES "apt-get install" \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
NODE22="$(node "$repo/scripts/node22.mjs" --which)"
PATH="$(dirname "$NODE22"):$PATH"
export PATH
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false NO_UPDATE_NOTIFIER=1

# --- State and cleanup --------------------------------------------------------------------------------------
mkdir -p "$cache"
# The lock is this shell's alone: everything started in the background gets `9>&-`, or a process left behind
# by a run killed outright would hold the lock and keep the next run from cleaning up after it.
exec 9>"$cache/.lock"
flock -w 1800 9 || fail "another test:container run has held $cache for 30 minutes"
run="$(mktemp -d /tmp/p6-container.XXXXXX)"
ns="p6c-$$"
dockerd_pid=""
worker_pid=""
host_suite_pid=""
box_suite_pid=""
watchdog_pid=""
export DOCKER_HOST="unix://$run/docker.sock"
# What this run has started, written where the next run looks: a run killed outright (SIGKILL, a lost
# session) cannot clean up after itself, so the next one does, holding the lock (nothing else uses these).
active="$cache/.active"

# Stops process group `pgid` if its leader is still the process recorded (its command line contains `mark`).
stop_recorded() {
  local pgid="$1" mark="$2"
  [ -n "$pgid" ] && [ -r "/proc/$pgid/cmdline" ] || return 0
  tr '\0' ' ' <"/proc/$pgid/cmdline" | grep -qF -- "$mark" || return 0
  kill -TERM -- "-$pgid" 2>/dev/null || kill -TERM "$pgid" 2>/dev/null || true
  for _ in $(seq 1 150); do
    kill -0 "$pgid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL -- "-$pgid" 2>/dev/null || kill -KILL "$pgid" 2>/dev/null || true
}

# What dockerd and its containerd leave mounted under a run's directory and the data root (deepest first).
unmount_under() {
  awk -v a="$1/" -v b="$cache/" 'index($2, a) == 1 || index($2, b) == 1 { print $2 }' /proc/mounts |
    sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

record() {
  printf 'old_run=%q\nold_ns=%q\nold_dockerd=%q\nold_worker=%q\nold_host_suite=%q\n' \
    "$run" "$ns" "$dockerd_pid" "$worker_pid" "$host_suite_pid" >"$active.new"
  mv "$active.new" "$active"
}

if [ -f "$active" ]; then
  echo "cleaning up after an earlier run that did not finish"
  old_run="" old_ns="" old_dockerd="" old_worker="" old_host_suite=""
  # shellcheck disable=SC1090
  . "$active"
  stop_recorded "$old_worker" worker-path.ts
  stop_recorded "$old_host_suite" vitest
  if [ -n "$old_dockerd" ] && [ -S "$old_run/docker.sock" ]; then
    timeout 60 "$docker" -H "unix://$old_run/docker.sock" ps -aq 2>/dev/null |
      xargs -r timeout 120 "$docker" -H "unix://$old_run/docker.sock" rm -f >/dev/null 2>&1 || true
  fi
  stop_recorded "$old_dockerd" "--data-root $cache/data"
  if [ -n "$old_ns" ]; then
    ip netns pids "$old_ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$old_ns" 2>/dev/null || true
  fi
  if [ -n "$old_run" ]; then
    unmount_under "$old_run"
    rm -rf "$old_run"
  fi
  rm -f "$active" "$here/sidecar/ca.pem"
fi
record

stop_dockerd() {
  [ -n "$dockerd_pid" ] || return 0
  if kill -0 "$dockerd_pid" 2>/dev/null; then
    # Containers first (tini passes SIGTERM on), then the daemon; wait for the process, not the socket.
    timeout 60 "$docker" ps -aq 2>/dev/null | xargs -r timeout 120 "$docker" rm -f >/dev/null 2>&1 || true
    kill -TERM "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 "$dockerd_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$dockerd_pid" 2>/dev/null || true
    while kill -0 "$dockerd_pid" 2>/dev/null; do sleep 0.1; done
  fi
  dockerd_pid=""
  record
  unmount_under "$run"
}

cleanup() {
  local code=$?
  trap - EXIT INT TERM
  set +e
  [ -z "$watchdog_pid" ] || kill "$watchdog_pid" 2>/dev/null
  stop_recorded "$worker_pid" worker-path.ts
  stop_recorded "$host_suite_pid" vitest
  [ -z "$box_suite_pid" ] || kill "$box_suite_pid" 2>/dev/null
  stop_dockerd
  ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  rm -rf "$run"
  rm -f "$active" "$here/sidecar/ca.pem"
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
# The whole run's limit: the watchdog TERMs this shell, whose trap cleans up. (A phase in the foreground is
# bounded by its own limit, so the trap runs at the latest when that limit is reached.)
(
  sleep "$limit_total" </dev/null >/dev/null 2>&1 &
  sleeping=$!
  trap 'kill "$sleeping" 2>/dev/null; exit 0' TERM
  wait "$sleeping"
  printf '\ntest:container FAILED: the whole run did not finish within %s s (time limit; TEST_CONTAINER_LIMIT sets it)\n' \
    "$limit_total" >&2
  kill -TERM $$
) 9>&- &
watchdog_pid=$!

# dockerd with its own sockets, pid file and exec-root under $run; the data root is the cache.
start_dockerd() {
  local log="$run/dockerd-$1.log"
  shift
  echo '{}' >"$run/daemon.json"
  "$@" /usr/sbin/dockerd --config-file "$run/daemon.json" --host "$DOCKER_HOST" \
    --data-root "$cache/data" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" \
    "${dockerd_args[@]}" >"$log" 2>&1 9>&- &
  dockerd_pid=$!
  record
  for _ in $(seq 1 150); do
    "$docker" version >/dev/null 2>&1 && return 0
    kill -0 "$dockerd_pid" 2>/dev/null || {
      tail -20 "$log"
      fail "dockerd exited"
    }
    sleep 0.2
  done
  tail -20 "$log"
  fail "dockerd did not answer within 30 s"
}

# --- Phase 1: images ----------------------------------------------------------------------------------------
step "images (dockerd in the machine's network, no bridge)"
dockerd_args=(--bridge=none --iptables=false --ip-masq=false)
start_dockerd build env

# The engine suite as a host process, meanwhile: its passed tests are compared with those inside the image.
# TEST_CONTAINER_HOST_RESULTS=<vitest JSON report> takes them from a run that already happened instead (.ci/run
# passes its `npm test`'s, which ran the media-engine project as a host process on this checkout just
# before): the suite is then not run twice. TEST_CONTAINER_SUITES=0 leaves both suites out, for work on the
# later steps only (never in CI; said loudly).
suites="${TEST_CONTAINER_SUITES:-1}"
host_results="${TEST_CONTAINER_HOST_RESULTS:-}"
# Seconds to wait for that report to appear when it is not there yet (.ci/run: npm test runs beside this).
host_results_wait="${TEST_CONTAINER_HOST_RESULTS_WAIT:-0}"
if [ "$suites" = 1 ] && [ -n "$host_results" ]; then
  echo "engine suite as a host process: not run again, its results are taken from $host_results"
elif [ "$suites" = 1 ]; then
  (cd "$repo" && NO_COLOR=1 exec setsid timeout -k 15 "$limit_suite" node node_modules/vitest/vitest.mjs run \
    --project media-engine --reporter=default --reporter=json --outputFile="$run/host-suite.json" \
    >"$run/host-suite.log" 2>&1) 9>&- &
  host_suite_pid=$!
  host_suite_started=$SECONDS
  record
fi

# The base is named after base-image.sh's own hash: an edit to it builds and imports a new one, not the old.
base_version="$(sha256sum "$here/base-image.sh" | cut -c1-12)"
base_tar="$cache/node-22-bookworm-slim-$base_version.tar"
if [ "$("$docker" image inspect -f '{{index .Config.Labels "p6.base"}}' node:22-bookworm-slim 2>/dev/null)" != "$base_version" ]; then
  if [ ! -f "$base_tar" ]; then
    rm -f "$cache"/node-22-bookworm-slim*.tar
    echo "building the base image node:22-bookworm-slim (mmdebstrap + Node 22 + npm; once per machine)"
    t0=$SECONDS
    limit "$limit_base" TEST_CONTAINER_LIMIT_BASE "the base image (base-image.sh)" \
      bash "$here/base-image.sh" "$base_tar"
    echo "base image built in $((SECONDS - t0)) s"
  fi
  limit "$limit_base" TEST_CONTAINER_LIMIT_BASE "docker import of the base image" "$docker" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-extra.pem' \
    --change 'CMD ["node"]' --change "LABEL p6.base=$base_version" \
    "$base_tar" node:22-bookworm-slim >/dev/null
fi

echo "building the engine image from containers/ffmpeg/Dockerfile"
build_log="$run/engine-build.log"
t0=$SECONDS
code=0
DOCKER_BUILDKIT=0 timeout -k 15 "$limit_build" "$docker" build --network host \
  -f "$repo/containers/ffmpeg/Dockerfile" -t p6-media-engine:test "$repo" >"$build_log" 2>&1 || code=$?
if [ "$code" != 0 ]; then
  tail -30 "$build_log"
  failed_with "$code" "the engine image's build" "$limit_build" TEST_CONTAINER_LIMIT_BUILD
fi
echo "engine image built in $((SECONDS - t0)) s"
context="$(tr '\r' '\n' <"$build_log" | sed -n 's/^Sending build context to Docker daemon *//p' | tail -1)"
echo "build context: $context (.dockerignore)"
case "$context" in *kB | *B) ;; *) fail "the build context is $context: .dockerignore lets too much in" ;; esac
"$docker" image ls p6-media-engine:test --format 'engine image: {{.Repository}}:{{.Tag}} {{.Size}}'

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=p6-sidecar-stand-in \
  -keyout /dev/null -out "$here/sidecar/ca.pem" 2>/dev/null
DOCKER_BUILDKIT=0 limit "$limit_build" TEST_CONTAINER_LIMIT_BUILD "the sidecar stand-in's build" \
  "$docker" build -q -t p6-proxy-everything:local "$here/sidecar" >/dev/null
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
# The media corpus the host run finds beside the checkout (../shared/corpus; the corpus subset test skips
# itself without it): mounted too, or the two runs would not count the same tests.
suite_env=()
corpus="${CORPUS_DIR:-$repo/../shared/corpus}"
if [ -d "$corpus" ]; then
  mounts+=(-v "$(realpath "$corpus"):/corpus:ro")
  suite_env=(-e CORPUS_DIR=/corpus)
fi
# The media matrix's files (containers/ffmpeg/test/matrix): made here by the host's ffmpeg, which has the
# encoders the engine's own build leaves out (x265, Theora; the engine only decodes what they make), into the
# run's scratch folder (≈ 16 s on 2 cores), and read inside the image from a read-only mount.
matrix_cache="$run/matrix"
made_by="$(cd "$repo" && MATRIX_CACHE="$matrix_cache" node scripts/node22.mjs containers/ffmpeg/test/matrix/make.ts | tail -1)" ||
  fail "the media matrix's files could not be made on the host (containers/ffmpeg/test/matrix/make.ts)"
chmod -R a+rX "$matrix_cache"
mounts+=(-v "$matrix_cache:/matrix:ro")
suite_env+=(-e MATRIX_CACHE=/matrix -e "MATRIX_MADE_BY=$made_by")
echo "media matrix files made by the host's $made_by"
for bin in "$repo"/node_modules/@ff*-installer/linux-x64/ff*; do
  [ -f "$bin" ] || continue
  copy="$run/npm-bin/$(basename "$(dirname "$(dirname "$bin")")")-$(basename "$bin")"
  mkdir -p "$run/npm-bin" && cp "$bin" "$copy" && chmod 755 "$copy"
  mounts+=(-v "$copy:/repo/${bin#"$repo"/}:ro")
done
"$docker" run -d --name p6c-engine -e ENGINE_SECRET="$engine_secret" "${mounts[@]}" p6-media-engine:test >/dev/null
engine_ip="$("$docker" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' p6c-engine)"
t0=$SECONDS
while [ $((SECONDS - t0)) -lt "$limit_healthz" ]; do
  "${in_ns[@]}" node -e "fetch('http://$engine_ip:8080/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))" && break
  sleep 0.2
done
"${in_ns[@]}" node -e "fetch('http://$engine_ip:8080/healthz').then(async r => { console.log('healthz', r.status, await r.text()); process.exit(r.ok ? 0 : 1) }, () => process.exit(1))" || {
  "$docker" logs p6c-engine | tail -20
  fail "the engine container did not answer /healthz within $limit_healthz s (TEST_CONTAINER_LIMIT_HEALTHZ sets it)"
}
echo "healthy $((SECONDS - t0)) s after docker run"

# The engine suite inside the container, and beside it the Worker → Container path: neither has timed
# assertions, and side by side the two waits (ffmpeg on one side, wrangler and container starts on the other)
# overlap instead of queueing.
if [ "$suites" != 1 ]; then
  echo "ENGINE SUITES SKIPPED (TEST_CONTAINER_SUITES=$suites): this run proves less than test:container should"
else
  # The suite as the image runs the engine: its Node, its ffmpeg build (build-ffmpeg.sh), user node. The checkout is mounted
  # read-only (the suite and vitest); the suite writes only to the container's /tmp. `timeout` runs inside
  # the container: stopping the docker CLI alone would leave the suite running in there. Same config as the
  # host run (containers/ffmpeg/vitest.config.ts, its maxWorkers included).
  box_started=$SECONDS
  "$docker" exec -u node -w /repo/containers/ffmpeg -e NO_COLOR=1 -e CI=true "${suite_env[@]}" p6c-engine \
    timeout -k 15 "$limit_suite" node /repo/node_modules/vitest/vitest.mjs run --config vitest.config.ts \
    --configLoader runner --no-cache --reporter=default --reporter=json --outputFile=/out/container-suite.json \
    >"$run/container-suite.log" 2>&1 9>&- &
  box_suite_pid=$!
  echo "the engine suite runs inside the container (container p6c-engine)"
fi

step "wrangler dev with containers: every operation and a task through the Container binding"
t0=$SECONDS
(cd "$repo" && exec setsid timeout -k 15 "$limit_worker" "${in_ns[@]}" env WRANGLER_DOCKER_BIN="$here/docker.sh" \
  MINIFLARE_CONTAINER_EGRESS_IMAGE=p6-proxy-everything:local P6_SOURCE_IP="$source_ip" P6_RUN_DIR="$run" \
  node scripts/test-container/worker-path.ts) 9>&- &
worker_pid=$!
record
code=0
wait "$worker_pid" || code=$?
worker_pid=""
record
echo "Worker → Container path: $((SECONDS - t0)) s"
[ "$code" = 0 ] || failed_with "$code" "the Worker → Container path" "$limit_worker" TEST_CONTAINER_LIMIT_WORKER

if [ "$suites" = 1 ]; then
  step "the engine suite's results: host process and container"
  if [ -n "$host_results" ]; then
    # .ci/run starts this once npm test has passed, its report in place; run by hand beside npm test, wait.
    if [ ! -e "$host_results" ] && [ "$host_results_wait" -gt 0 ]; then
      echo "waiting for $host_results (npm test, beside this run; TEST_CONTAINER_HOST_RESULTS_WAIT=$host_results_wait s)"
      t0=$SECONDS
      while [ ! -e "$host_results" ] && [ $((SECONDS - t0)) -lt "$host_results_wait" ]; do sleep 2; done
      echo "the report was there $((SECONDS - t0)) s later"
    fi
    [ -s "$host_results" ] || fail "TEST_CONTAINER_HOST_RESULTS=$host_results: no such report"
    host_files=0
    read -r host_passed host_failed host_skipped host_files < <(node "$here/suite-counts.ts" "$host_results" "$run/host-passed.txt") ||
      fail "TEST_CONTAINER_HOST_RESULTS=$host_results: not a vitest JSON report"
    [ "$host_files" -gt 0 ] || fail "TEST_CONTAINER_HOST_RESULTS=$host_results has no media-engine test files"
    echo "engine suite as a host process: $host_files files in $host_results"
  else
    code=0
    wait "$host_suite_pid" || code=$?
    host_suite_pid=""
    record
    echo "engine suite as a host process: $((SECONDS - host_suite_started)) s"
    if [ "$code" != 0 ]; then
      tail -60 "$run/host-suite.log"
      failed_with "$code" "the engine suite as a host process" "$limit_suite" TEST_CONTAINER_LIMIT_SUITE
    fi
    grep -E '^ *(Test Files|Tests|Duration) ' "$run/host-suite.log" | sed 's/^/  host process: /'
    read -r host_passed host_failed host_skipped _ < <(node "$here/suite-counts.ts" "$run/host-suite.json" "$run/host-passed.txt")
  fi
  code=0
  wait "$box_suite_pid" || code=$?
  box_suite_pid=""
  # Its own duration (vitest's) and when this run had it: the Worker path ran meanwhile.
  echo "engine suite inside the container: $(sed -n 's/^ *Duration *\([0-9.]*s\).*/\1/p' "$run/container-suite.log" | tail -1), done $((SECONDS - box_started)) s after its start or sooner"
  if [ "$code" != 0 ]; then
    tail -60 "$run/container-suite.log"
    failed_with "$code" "the engine suite inside the container" "$limit_suite" TEST_CONTAINER_LIMIT_SUITE
  fi
  grep -E '^ *(Test Files|Tests) ' "$run/container-suite.log" | sed 's/^/  container:    /'
  read -r box_passed box_failed box_skipped _ < <(node "$here/suite-counts.ts" "$run/out/container-suite.json" "$run/box-passed.txt")
  echo "engine suite, host process: $host_passed passed, $host_failed failed, $host_skipped skipped"
  echo "engine suite, in the image: $box_passed passed, $box_failed failed, $box_skipped skipped"
  [ "$host_failed" = 0 ] && [ "$box_failed" = 0 ] || fail "the engine suite has failures"
  [ "$host_passed" = "$box_passed" ] || fail "the pass counts differ (host $host_passed, image $box_passed)"
  # Equal counts, and the same tests by name (a test passing on one side only would otherwise hide behind
  # another's skip).
  if ! diff -u "$run/host-passed.txt" "$run/box-passed.txt" >"$run/passed.diff"; then
    head -40 "$run/passed.diff"
    fail "the same number of tests passed, but not the same tests (host process vs image)"
  fi
  echo "the same $box_passed tests passed in both, by name"
fi
# The image's HEALTHCHECK (every 30 s, on $PORT) has run by now when the suite ran.
health="$("$docker" inspect -f '{{.State.Health.Status}}' p6c-engine)"
echo "HEALTHCHECK: $health"
[ "$suites" != 1 ] || [ "$health" = healthy ] || fail "the image's HEALTHCHECK says $health"
"$docker" rm -f p6c-engine >/dev/null
# workerd starts an egress sidecar `<container>-proxy` beside each container instance and does not always remove
# it when it removes the container (upstream: cloudflare/workers-sdk#14242, open; CI saw one at stop 21). Such an
# orphan is wrangler dev's, not the engine's: it is removed and counted here. Any other container left behind,
# an engine container or a sidecar whose container still exists, still fails the run.
orphans=()
names="$("$docker" ps -a --format '{{.Names}}')"
while read -r name; do
  case "$name" in *-proxy) grep -qxF -- "${name%-proxy}" <<<"$names" || orphans+=("$name") ;; esac
done <<<"$names"
if [ "${#orphans[@]}" -gt 0 ]; then
  "$docker" rm -f "${orphans[@]}" >/dev/null
  echo "removed ${#orphans[@]} orphaned egress sidecar(s) whose container workerd had already removed (workers-sdk#14242)"
fi
leftover="$("$docker" ps -aq)"
[ -z "$leftover" ] || {
  "$docker" ps -a
  fail "wrangler left containers behind"
}
