#!/usr/bin/env bash
# Release check: do the README's `npm test` and `npm start` work on a fresh Debian bookworm machine
# with Node.js 20? Never part of `npm test` (needs root, the network and several minutes).
#
# A debootstrap root (cached) gets a throw-away overlay, this host's Node 20 + npm (bookworm has no
# Node 20), a `git clone` of the repo's committed HEAD and ../shared beside it (read-only), then:
#   phase 1  host network: `scripts/setup.sh --test` installs the Debian packages, npm ci, builds,
#            links the model, compiles the decoder (the host's PostgreSQL/Redis answer here), and a
#            second run must take the fast path (no apt, no npm ci).
#   phase 2  a new network namespace where nothing answers on 5432/6379: `scripts/setup.sh --test`
#            must start the root's own PostgreSQL cluster (peer auth, stock pg_hba) and Redis, create
#            the role and databases and migrate; then `bash .ci/run` (npm test); then `scripts/run.sh`
#            in the background, whose printed curl must create a session (201).
#
# Usage: scripts/fresh-machine-check.sh [--as-user] [--rebuild-base] [--keep] [--no-tests] [--no-start]
#   --as-user       run everything as a developer account `dev` with passwordless sudo (sudo is
#                   installed into the root first) instead of as root
#   --rebuild-base  debootstrap again instead of reusing $FRESH_CACHE/base
#   --keep          leave the root mounted afterwards (inspect with: chroot $FRESH_CACHE/run/root)
#   --no-tests      skip `npm test` in phase 2 (setup and start only)
#   --no-start      skip the `scripts/run.sh` check
# Env: FRESH_SUITE (bookworm; an Ubuntu suite such as jammy or noble checks the README's Ubuntu
#      claim: main+universe, as a stock install has), FRESH_CACHE (/tmp/fresh-root, per suite
#      /tmp/fresh-root-<suite>), FRESH_MIRROR (deb.debian.org or archive.ubuntu.com),
#      FRESH_REPO (this repo), FRESH_SHARED (the repo's ../shared), FRESH_HTTP_PORT (18080)
set -uo pipefail

REPO=${FRESH_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
SHARED=${FRESH_SHARED:-$(cd "$REPO/.." && pwd)/shared}
SUITE=${FRESH_SUITE:-bookworm}
BOOTSTRAP_OPTS=(--include=git)
case "$SUITE" in
  bookworm) CACHE=${FRESH_CACHE:-/tmp/fresh-root}; MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian} ;;
  bullseye|trixie) CACHE=${FRESH_CACHE:-/tmp/fresh-root-$SUITE}; MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian} ;;
  *) # Ubuntu. A Debian host has no Ubuntu keyring: the bootstrap is unverified, the root's own apt
     # (with its ubuntu-keyring) verifies everything setup.sh installs.
    CACHE=${FRESH_CACHE:-/tmp/fresh-root-$SUITE}; MIRROR=${FRESH_MIRROR:-http://archive.ubuntu.com/ubuntu}
    BOOTSTRAP_OPTS+=(--components=main,universe --no-check-gpg) ;;
esac
BOOTSTRAP_SCRIPT=()
[ -e "/usr/share/debootstrap/scripts/$SUITE" ] || BOOTSTRAP_SCRIPT=(/usr/share/debootstrap/scripts/gutsy)
HTTP_PORT_CHECK=${FRESH_HTTP_PORT:-18080}
BASE=$CACHE/base
RUN=$CACHE/run
ROOT=$RUN/root
LOGS=$CACHE/logs
REBUILD=0 KEEP=0 TESTS=1 START=1 DEV=root
for a in "$@"; do
  case "$a" in
    --as-user) DEV=dev ;;
    --rebuild-base) REBUILD=1 ;;
    --keep) KEEP=1 ;;
    --no-tests) TESTS=0 ;;
    --no-start) START=0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

log() { printf '\033[1;35m[fresh]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[fresh] %s\033[0m\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, mount, chroot, unshare)"
for t in debootstrap unshare chroot ip mount; do command -v "$t" >/dev/null || die "$t is required (apt-get install debootstrap iproute2 util-linux)"; done
[ -d "$REPO/.git" ] || die "$REPO is not a git checkout"
[ -d "$SHARED" ] || log "no shared folder at $SHARED: the model will be downloaded"
command -v node >/dev/null || die "this host needs Node.js 20 (it is copied into the root)"

SUMMARY=()
note() { SUMMARY+=("$(printf '%-34s %-6s %s' "$1" "$2" "${3:-}")"); }

# ---- base root: debootstrap once, reused ------------------------------------------------------
if [ $REBUILD = 1 ] || [ ! -f "$BASE/.vb-base-ok" ]; then
  log "debootstrap $SUITE into $BASE (a few minutes)"
  rm -rf "$BASE"
  mkdir -p "$CACHE"
  t0=$SECONDS
  debootstrap "${BOOTSTRAP_OPTS[@]}" "$SUITE" "$BASE" "$MIRROR" "${BOOTSTRAP_SCRIPT[@]}" >"$CACHE/debootstrap.log" 2>&1 \
    || die "debootstrap failed, see $CACHE/debootstrap.log"
  touch "$BASE/.vb-base-ok"
  note "debootstrap" ok "$((SECONDS - t0))s"
fi

# ---- mounts ------------------------------------------------------------------------------------
# Kills processes started inside the root (by pid), then unmounts everything under it.
teardown() {
  [ -d "$ROOT" ] || return 0
  local pids=() p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && pids+=("${p#/proc/}")
  done
  if [ ${#pids[@]} -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null
    sleep 2
    kill -9 "${pids[@]}" 2>/dev/null
  fi
  local m
  for m in $(awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null
  done
}
trap '[ $KEEP = 1 ] || teardown' EXIT

teardown
# Never delete through a mount that survived (the root binds /dev, the repo and ../shared).
if awk -v r="$RUN" 'index($2, r "/") == 1 { found = 1 } END { exit !found }' /proc/mounts; then
  die "mounts are left under $RUN; unmount them before re-running"
fi
rm -rf --one-file-system "$RUN"
mkdir -p "$RUN/upper" "$RUN/work" "$ROOT" "$LOGS" "$CACHE/apt-archives/partial"
rm -f "$LOGS"/*.log
mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$RUN/upper,workdir=$RUN/work" "$ROOT" || die "overlay mount failed"
mount -t proc proc "$ROOT/proc"
mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys"
mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev"
# Downloaded .debs survive between checks (speed only: apt still resolves against the mirror).
mount --bind "$CACHE/apt-archives" "$ROOT/var/cache/apt/archives"

# Stand-in for "a machine with Node.js 20": this host's node and npm, with its npm settings.
cp /usr/bin/node "$ROOT/usr/bin/node"
npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
mkdir -p "$ROOT/usr/lib/node_modules"
cp -a "$npm_dir" "$ROOT/usr/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/bin/npx"
for f in /usr/etc/npmrc /etc/npmrc /root/.npmrc; do
  [ -f "$f" ] && mkdir -p "$ROOT$(dirname "$f")" && cp -p "$f" "$ROOT$f"
done
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The installer maps the machine's own name (sudo looks it up; phase 2 has no DNS).
grep -qw "$(hostname)" "$ROOT/etc/hosts" || printf '127.0.1.1\t%s\n' "$(hostname)" >>"$ROOT/etc/hosts"
# This host's extra trust anchors (e.g. a TLS-inspecting proxy's CA appended to its bundle): the
# certificates in its bundle that Debian's ca-certificates does not ship. The root's ca-certificates
# (installed by setup.sh) picks them up from /usr/local/share/ca-certificates.
if [ -f /etc/ssl/certs/ca-certificates.crt ] && [ -d /usr/share/ca-certificates/mozilla ]; then
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cat /usr/share/ca-certificates/mozilla/*.crt | tr -d '\r' >"$RUN/stock-cas.txt"
  awk -v dir="$ROOT/usr/local/share/ca-certificates" -v stock="$RUN/stock-cas.txt" '
    BEGIN { while ((getline l < stock) > 0) known[l] = 1 }
    /BEGIN CERTIFICATE/ { n++; pem = ""; first = "" }
    { pem = pem $0 "\n" }
    /^[A-Za-z0-9+\/=]+$/ && first == "" { first = $0 }
    /END CERTIFICATE/ { if (!(first in known)) { f = sprintf("%s/host-extra-%03d.crt", dir, n); printf "%s", pem > f; close(f) } }
  ' /etc/ssl/certs/ca-certificates.crt
  # Bases that already ship ca-certificates (Ubuntu's) need the bundle rebuilt now.
  [ -x "$ROOT/usr/sbin/update-ca-certificates" ] && chroot "$ROOT" update-ca-certificates >/dev/null 2>&1
fi
# As in any chroot or container: package scripts must not start daemons (nothing would supervise
# them, and in phase 1 they would collide with the host's). Phase 2 checks setup.sh starts them.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod 755 "$ROOT/usr/sbin/policy-rc.d"

# The clone: committed files only; ../shared beside it read-only, as CI has it.
mkdir -p "$ROOT/mnt/origin.git" "$ROOT/srv/ci/shared"
mount --bind "$REPO/.git" "$ROOT/mnt/origin.git" && mount -o remount,bind,ro "$ROOT/mnt/origin.git"
if [ -d "$SHARED" ]; then mount --bind "$SHARED" "$ROOT/srv/ci/shared" && mount -o remount,bind,ro "$ROOT/srv/ci/shared"; fi

summary() {
  echo
  echo "fresh-machine check ($SUITE) of ${HEAD:-?} as $DEV ($(date -u +%FT%TZ))"
  printf '%s\n' "${SUMMARY[@]}"
  [ -n "${failed:-}" ] && { echo "failing test files:"; printf '%s\n' "$failed" | sed 's/^/  /'; }
  echo "logs: $LOGS"
  case "${SUMMARY[*]}" in *" FAIL "*) exit 1 ;; esac
  exit 0
}

# A login-like clean environment for user $1 inside the root.
root_env() {
  local home=/root
  [ "$1" = root ] || home=/home/$1
  echo chroot "$ROOT" runuser -u "$1" -- /usr/bin/env -i HOME=$home USER=$1 LOGNAME=$1 LANG=C.UTF-8 TERM=dumb CI=1 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
}
in_root() { $(root_env root) bash -c "$1"; }   # harness work
as_dev() { $(root_env "$DEV") bash -c "$1"; }  # what the developer (or CI) runs

if [ "$DEV" != root ]; then
  log "preparing user $DEV with sudo"
  in_root "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends sudo >/dev/null" \
    >"$LOGS/prepare-user.log" 2>&1 || die "could not install sudo, see $LOGS/prepare-user.log"
  in_root "useradd -m -s /bin/bash $DEV && echo '$DEV ALL=(ALL) NOPASSWD:ALL' >/etc/sudoers.d/$DEV && chmod 440 /etc/sudoers.d/$DEV"
  for f in /root/.npmrc; do [ -f "$ROOT$f" ] && install -m 600 "$ROOT$f" "$ROOT/home/$DEV/.npmrc" && in_root "chown $DEV: /home/$DEV/.npmrc"; done
fi
mkdir -p "$ROOT/srv/ci/logs" && in_root "chown $DEV: /srv/ci /srv/ci/logs"
# The origin is owned by root: a developer account must mark it safe to clone from it.
[ "$DEV" = root ] || as_dev "git config --global --add safe.directory /mnt/origin.git"
as_dev "git clone -q /mnt/origin.git /srv/ci/voxbridge" || die "git clone failed"
HEAD=$(as_dev "cd /srv/ci/voxbridge && git log -1 --format='%h %s'")
log "clone at $HEAD"

# ---- phase 1: host network ----------------------------------------------------------------------
log "phase 1: scripts/setup.sh --test on the host network (log: $LOGS/phase1-setup.log)"
t0=$SECONDS
as_dev "cd /srv/ci/voxbridge && bash scripts/setup.sh --test" >"$LOGS/phase1-setup.log" 2>&1
rc=$?
note "phase1 setup.sh --test (cold)" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$((SECONDS - t0))s rc=$rc"
if [ $rc != 0 ]; then tail -30 "$LOGS/phase1-setup.log" >&2; summary; fi
for what in "model link:test -d .voxbridge/models/hub4wsj_sc_8k" "decoder built:test -x .voxbridge/bin/vb-sphinx-decoder" "dist built:test -f dist/cli/index.js"; do
  as_dev "cd /srv/ci/voxbridge && ${what#*:}" && note "  ${what%%:*}" ok || note "  ${what%%:*}" FAIL
done
t0=$SECONDS
as_dev "cd /srv/ci/voxbridge && bash scripts/setup.sh --test" >"$LOGS/phase1-setup-again.log" 2>&1
rc=$?
slow=$(grep -E 'installing|building|creating|downloading' "$LOGS/phase1-setup-again.log" | tr '\n' ' ')
note "phase1 setup.sh again (warm)" "$([ $rc = 0 ] && [ -z "$slow" ] && echo ok || echo FAIL)" "$((SECONDS - t0))s rc=$rc ${slow}"

# Artifact of phase 1 sharing the host's network: the package's pg_createcluster saw the host's
# PostgreSQL on 5432 and put the root's cluster on the next free port. A fresh machine gets 5432.
ports=$(in_root "pg_lsclusters -h 2>/dev/null | awk '{ print \$1 \"/\" \$2 \":\" \$3 }'")
for c in $ports; do
  if [ "${c##*:}" != 5432 ]; then
    v=${c%%/*} n=${c#*/}; n=${n%%:*}
    in_root "pg_conftool $v $n set port 5432" && note "  harness: cluster $v/$n port" ok "${c##*:} -> 5432 (host held 5432 in phase 1)"
  fi
done

# ---- phase 2: own network namespace, nothing answering ---------------------------------------------
cat >"$ROOT/srv/ci/phase2.sh" <<'PHASE2'
#!/usr/bin/env bash
# Runs inside the root, in a network namespace of its own. Prints "RESULT <step> <ok|FAIL> <detail>".
set -u
TESTS=$1 START=$2 PORT=$3 LOGS=/srv/ci/logs
mkdir -p $LOGS
cd /srv/ci/voxbridge
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
answers 5432 && echo "RESULT phase2-precondition FAIL something answers on 5432"
answers 6379 && echo "RESULT phase2-precondition FAIL something answers on 6379"
t0=$SECONDS
bash scripts/setup.sh --test >$LOGS/phase2-setup.log 2>&1; rc=$?
echo "RESULT phase2-setup $([ $rc = 0 ] && echo ok || echo FAIL) $((SECONDS - t0))s rc=$rc"
answers 5432 && echo "RESULT phase2-postgres-up ok" || echo "RESULT phase2-postgres-up FAIL"
answers 6379 && echo "RESULT phase2-redis-up ok" || echo "RESULT phase2-redis-up FAIL"
if [ "$TESTS" = 1 ]; then
  t0=$SECONDS
  bash .ci/run >$LOGS/phase2-test.log 2>&1; rc=$?
  echo "RESULT phase2-npm-test $([ $rc = 0 ] && echo ok || echo FAIL) $((SECONDS - t0))s rc=$rc"
fi
# `npm start` in the background: key and curl printed, the curl creates a session, SIGTERM stops it.
start_check() {
  local name=$1 out=$LOGS/phase2-$1.log t0=$SECONDS pid code cmd base="http://127.0.0.1:$PORT"
  HTTP_PORT=$PORT bash scripts/run.sh >"$out" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do
    grep -q 'curl -s' "$out" && curl -fs -o /dev/null "$base/readyz" && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.5
  done
  if curl -fs -o /dev/null "$base/readyz"; then
    echo "RESULT phase2-$name-ready ok $((SECONDS - t0))s"
  else
    echo "RESULT phase2-$name-ready FAIL not ready after $((SECONDS - t0))s"
  fi
  key=$(sed -n 's/.*API key (saved in .*): \(sk_test_[a-z0-9]*\).*/\1/p' "$out")
  [ -n "$key" ] && echo "RESULT phase2-$name-key ok" || echo "RESULT phase2-$name-key FAIL"
  # The curl exactly as printed (two lines joined at the backslash), plus status capture.
  cmd=$(sed -n '/Create a session:/{n;N;p}' "$out" | sed -e 's/\\$//' | tr -d '\n')
  if [ -n "$cmd" ]; then
    code=$(eval "$cmd -o $LOGS/phase2-$name-curl-body.json -w '%{http_code}'")
    echo "RESULT phase2-$name-curl $([ "$code" = 201 ] && echo ok || echo FAIL) HTTP $code"
  else
    echo "RESULT phase2-$name-curl FAIL no curl printed"
  fi
  kill $pid 2>/dev/null
  for _ in $(seq 1 40); do kill -0 $pid 2>/dev/null || break; sleep 0.25; done
  if kill -0 $pid 2>/dev/null; then
    echo "RESULT phase2-$name-stop FAIL still running 10s after SIGTERM"; kill -9 $pid
  else
    echo "RESULT phase2-$name-stop ok"
  fi
}
if [ "$START" = 1 ]; then
  start_check start
  first=$key
  start_check start-again   # second run: reuses the saved demo key
  [ -n "$first" ] && [ "$key" = "$first" ] && echo "RESULT phase2-start-again-same-key ok" || echo "RESULT phase2-start-again-same-key FAIL"
fi
# Stop what setup.sh started in this namespace.
S=; [ "$(id -u)" = 0 ] || S=sudo
pg_lsclusters -h | awk '$4 == "online" { print $1, $2 }' | while read -r v c; do $S pg_ctlcluster "$v" "$c" stop; done
redis-cli -h 127.0.0.1 shutdown nosave >/dev/null 2>&1
exit 0
PHASE2
log "phase 2: new network namespace: setup.sh --test (services cold)$([ $TESTS = 1 ] && echo ', npm test')$([ $START = 1 ] && echo ', run.sh + curl')"
unshare --net --fork -- bash -c 'ip link set lo up && exec "$@"' _ \
  $(root_env "$DEV") bash /srv/ci/phase2.sh "$TESTS" "$START" "$HTTP_PORT_CHECK" >"$LOGS/phase2-results.txt" 2>&1
cp "$ROOT"/srv/ci/logs/*.log "$ROOT"/srv/ci/logs/*.json "$LOGS/" 2>/dev/null
while read -r tag step status detail; do
  [ "$tag" = RESULT ] && note "$step" "$status" "$detail"
done <"$LOGS/phase2-results.txt"

if [ -f "$LOGS/phase2-test.log" ]; then
  sed -e 's/\x1b\[[0-9;]*m//g' "$LOGS/phase2-test.log" >"$LOGS/phase2-test.plain.log"
  files=$(grep -E '^ +Test Files ' "$LOGS/phase2-test.plain.log" | tail -1 | sed 's/^ *//')
  tests=$(grep -E '^ +Tests ' "$LOGS/phase2-test.plain.log" | tail -1 | sed 's/^ *//')
  dur=$(grep -E '^ +Duration ' "$LOGS/phase2-test.plain.log" | tail -1 | awk '{ print $2 }')
  [ -n "$files" ] && note "  vitest" "" "$files / $tests / $dur"
  failed=$(grep -E '^ FAIL ' "$LOGS/phase2-test.plain.log" | sed 's/^ FAIL *//; s/ > .*//; s/ \[.*//' | sort | uniq -c | awk '{ print $2 " (" $1 " failed)" }')
fi

summary
