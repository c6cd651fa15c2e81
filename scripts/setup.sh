#!/usr/bin/env bash
# Sets up everything voxbridge needs on a Debian/Ubuntu machine, idempotently:
# system packages (only the missing ones), PostgreSQL and Redis (started only when not answering),
# npm dependencies and the build, the 8 kHz speech model, the pocketsphinx streaming decoder,
# the database role and databases, and the migrations.
#   scripts/setup.sh             for running the gateway
#   scripts/setup.sh --test      also prepares the test database (and installs Kamailio for the edge tests)
#   scripts/setup.sh --kamailio  also installs the Kamailio edge, writes its configuration from the
#                                EDGE_* variables (sip/kamailio/render.sh) into .voxbridge/kamailio/
#                                and starts it (README "Edge: Kamailio"; TLS and mutual TLS per trunk
#                                with EDGE_TLS_CERT/KEY, EDGE_TLS_CLIENT_CA, EDGE_TLS_TRUNKS=PORT=CAFILE,…)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
FOR_TEST=0
WITH_KAMAILIO=0
for arg in "$@"; do
  case "$arg" in
    --test) FOR_TEST=1 ;;
    --kamailio) WITH_KAMAILIO=1 ;;
    *) echo "usage: scripts/setup.sh [--test] [--kamailio]" >&2; exit 2 ;;
  esac
done

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[setup] %s\033[0m\n' "$*" >&2; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "not root and no sudo: install the packages listed in scripts/setup.sh by hand"
  SUDO="sudo"
fi

# ---- system packages -------------------------------------------------------------------------
PACKAGES=(
  postgresql redis-server
  sip-tester rtpengine-daemon
  espeak-ng flite sox lame
  apertium apertium-eng-spa
  pocketsphinx pocketsphinx-en-us libpocketsphinx-dev libsphinxbase-dev
  gcc make pkg-config ca-certificates curl liburing-dev
  chromium
)
# The SIP edge (sip/kamailio/): for the edge itself and for its end-to-end tests.
if [ $FOR_TEST = 1 ] || [ $WITH_KAMAILIO = 1 ]; then PACKAGES+=(kamailio kamailio-tls-modules openssl); fi
# A real softphone for the SIP interop tests (test/e2e/sip-baresip.test.ts); `ss` (iproute2) reads a
# socket's kernel buffer back in test/unit/telephony/sip-udp-buffer.test.ts and
# test/e2e/stream-output-backpressure.test.ts, whose client with a small receive buffer is python3.
if [ $FOR_TEST = 1 ]; then PACKAGES+=(baresip-core iproute2 python3); fi
missing=()
for p in "${PACKAGES[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  unavailable=()
  for p in "${missing[@]}"; do
    # Captured first: grep -q closing the pipe early would fail the pipeline under pipefail.
    policy=$(apt-cache policy "$p" 2>/dev/null)
    grep -q 'Candidate: [^(]' <<<"$policy" || unavailable+=("$p")
  done
  # Ubuntu 22.04 has neither rtpengine-daemon nor apertium-eng-spa; Ubuntu needs universe enabled.
  [ ${#unavailable[@]} -eq 0 ] || die "not available from this machine's apt sources: ${unavailable[*]} (voxbridge needs Debian 12 or newer, or Ubuntu 24.04 or newer with universe)"
  # Through env: sudo drops DEBIAN_FRONTEND from the caller's environment.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Debian kamailio package enables its own service with a sample configuration on 5060 (the
# gateway's port): voxbridge runs its edge itself, so that service stays off.
if [ $FOR_TEST = 1 ] || [ $WITH_KAMAILIO = 1 ]; then
  if command -v systemctl >/dev/null && systemctl is-enabled kamailio >/dev/null 2>&1; then
    $SUDO systemctl disable --now kamailio >/dev/null 2>&1 || true
  fi
fi
command -v node >/dev/null || die "Node.js 20 is required (node not found)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || die "Node.js 20 or newer is required (found $(node --version))"

# ---- PostgreSQL ------------------------------------------------------------------------------
PGHOST_ADDR=${PGHOST_ADDR:-127.0.0.1}
if ! pg_isready -q -h "$PGHOST_ADDR" -p 5432; then
  # Start the cluster configured on 5432 (pg_createcluster picks the next free port, so a cluster
  # created while something else held 5432 sits on 5433 and would never answer where we look).
  cluster=$(pg_lsclusters -h 2>/dev/null | awk '$3 == 5432 { print $1 " " $2; exit }')
  if [ -z "$cluster" ]; then
    found=$(pg_lsclusters -h 2>/dev/null | awk '{ printf "%s%s/%s on port %s", (NR > 1 ? ", " : ""), $1, $2, $3 }')
    die "no PostgreSQL cluster is configured on port 5432 (${found:-no cluster found}); set port = 5432 in /etc/postgresql/<version>/<cluster>/postgresql.conf, or create one: pg_createcluster -p 5432 <version> main"
  fi
  log "starting PostgreSQL ${cluster/ //}"
  # On a systemd machine this goes through systemctl; elsewhere (containers, chroots) directly.
  # shellcheck disable=SC2086
  $SUDO pg_ctlcluster $cluster start 2>/dev/null || $SUDO pg_ctlcluster --skip-systemctl-redirect $cluster start
  for _ in $(seq 1 60); do pg_isready -q -h "$PGHOST_ADDR" -p 5432 && break; sleep 0.5; done
  pg_isready -q -h "$PGHOST_ADDR" -p 5432 || die "PostgreSQL ${cluster/ //} did not come up on $PGHOST_ADDR:5432 (check listen_addresses and its log in /var/log/postgresql)"
fi
# Superuser access: the postgres OS user (peer auth) on a stock install, TCP trust elsewhere.
# From / so psql as postgres does not warn about a home directory it cannot enter.
as_postgres=(sudo -u postgres)
[ -n "$SUDO" ] || as_postgres=(runuser -u postgres --)
psql_admin() {
  if id postgres >/dev/null 2>&1 && (cd / && "${as_postgres[@]}" psql -qAt -c 'SELECT 1') >/dev/null 2>&1; then
    (cd / && "${as_postgres[@]}" psql -v ON_ERROR_STOP=1 -qAt "$@")
  else
    psql -h "$PGHOST_ADDR" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"
  fi
}
psql_admin -c "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'voxbridge') THEN CREATE ROLE voxbridge LOGIN PASSWORD 'voxbridge'; END IF; END \$\$;"
for db in voxbridge $([ $FOR_TEST = 1 ] && echo voxbridge_test); do
  if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" != "1" ]; then
    log "creating database $db"
    psql_admin -c "CREATE DATABASE $db OWNER voxbridge"
  fi
  psql_admin -d "$db" -c "ALTER DATABASE $db OWNER TO voxbridge; GRANT ALL ON SCHEMA public TO voxbridge; ALTER SCHEMA public OWNER TO voxbridge;" >/dev/null
done

# ---- Redis -----------------------------------------------------------------------------------
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  log "starting Redis"
  # As the package's redis user when there is one (it owns /var/lib/redis and /var/log/redis).
  as_redis=()
  if id redis >/dev/null 2>&1; then
    if [ -n "$SUDO" ]; then as_redis=(sudo -u redis); else as_redis=(runuser -u redis --); fi
  else
    as_redis=($SUDO)
    $SUDO mkdir -p /var/lib/redis /var/log/redis
  fi
  "${as_redis[@]}" redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/voxbridge.log
  for _ in $(seq 1 40); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.25; done
  redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 || die "Redis did not come up on 127.0.0.1:6379"
fi

# ---- npm dependencies and build ----------------------------------------------------------------
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm dependencies"
  # onnxruntime-node ships its CPU binaries; its postinstall would fetch CUDA ones from outside the
  # npm registry (and fail offline): skipped here for every npm (package.json's allowScripts denies it on npm 11+).
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
fi
if [ ! -f dist/cli/index.js ] || [ -n "$(find src -name '*.ts' -newer dist/cli/index.js -print -quit)" ]; then
  log "building"
  npx tsc -p tsconfig.json
fi
if [ ! -f dist/web/index.html ] || [ -n "$(find web -newer dist/web/index.html -not -path '*/node_modules/*' -print -quit)" ]; then
  log "building the web console"
  npm run -s build:web
fi

# ---- speech: the 8 kHz acoustic model and the streaming decoder ----------------------------------
bash scripts/fetch-model.sh
# The default VAD (Silero) needs its model on media nodes; VAD_ENGINE=energy runs without it.
bash scripts/fetch-vad-model.sh || [ "${VAD_ENGINE:-silero}" = energy ] || die "the Silero VAD model is unavailable: fetch it (scripts/fetch-vad-model.sh, VOXBRIDGE_VAD_MODEL_URL for a mirror) or set VAD_ENGINE=energy"
if [ -f scripts/build-sphinx-decoder.sh ]; then bash scripts/build-sphinx-decoder.sh; fi
# ---- media: the batched RTP socket addon (MEDIA_IO=auto uses dgram without it) ------------------
bash scripts/build-rtp-io.sh || log "the RTP I/O addon did not build: RTP sockets will use dgram (MEDIA_IO=auto), MEDIA_IO=native will not start"
# ---- stream: the kernel send queue's bound (TCP_NOTSENT_LOWAT) --------------------------------
bash scripts/build-tcp-send-queue.sh || log "the TCP send-queue addon did not build: a stream client that falls behind may get audio seconds late (set net.ipv4.tcp_notsent_lowat)"

# ---- schema ----------------------------------------------------------------------------------
DATABASE_URL=${DATABASE_URL:-postgres://voxbridge:voxbridge@127.0.0.1:5432/voxbridge} node bin/voxbridge.js migrate >/dev/null

# ---- Kamailio edge (--kamailio) ------------------------------------------------------------------
if [ $WITH_KAMAILIO = 1 ]; then
  EDGE_DIR="$ROOT/.voxbridge/kamailio"
  bash sip/kamailio/render.sh "$EDGE_DIR" >/dev/null
  kamailio -c -f "$EDGE_DIR/kamailio.cfg" >/dev/null 2>"$EDGE_DIR/check.log" || die "the edge configuration does not load: see $EDGE_DIR/check.log"
  if [ -f "$EDGE_DIR/run/kamailio.pid" ] && kill -0 "$(cat "$EDGE_DIR/run/kamailio.pid")" 2>/dev/null; then
    log "restarting the Kamailio edge with the new configuration"
    kill "$(cat "$EDGE_DIR/run/kamailio.pid")"
    for _ in $(seq 1 40); do kill -0 "$(cat "$EDGE_DIR/run/kamailio.pid")" 2>/dev/null || break; sleep 0.25; done
  fi
  log "starting the Kamailio edge on ${EDGE_LISTEN:-0.0.0.0}:${EDGE_PORT:-5060} for nodes ${EDGE_NODES:-127.0.0.1:5080} (log: $EDGE_DIR/kamailio.log)"
  if [ -n "${EDGE_TLS_CERT:-}" ]; then
    log "SIP over TLS on ${EDGE_TLS_PORT:-5061}${EDGE_TLS_CLIENT_CA:+ (client certificates verified against $EDGE_TLS_CLIENT_CA)}${EDGE_TLS_TRUNKS:+; mutual-TLS trunk ports (PORT=CA): $EDGE_TLS_TRUNKS}"
  fi
  nohup kamailio -DD -E -f "$EDGE_DIR/kamailio.cfg" -Y "$EDGE_DIR/run" -P "$EDGE_DIR/run/kamailio.pid" >"$EDGE_DIR/kamailio.log" 2>&1 &
  log "run the gateway behind it on the port EDGE_NODES names (SIP_PORT=5080) with SIP_TRUSTED_EDGE=<the edge's address>"
fi
log "ready"
