#!/usr/bin/env bash
# Writes a runnable edge configuration into OUTDIR from EDGE_* variables (README "Edge: Kamailio"):
#   OUTDIR/kamailio.cfg        the routing logic (a copy of sip/kamailio/kamailio.cfg)
#   OUTDIR/edge-settings.cfg   listen sockets, nodes, rtpengine, TLS, flood thresholds
#   OUTDIR/dispatcher.list     the voxbridge nodes
#   OUTDIR/tls.cfg             when TLS is on
# Then:  kamailio -DD -E -f OUTDIR/kamailio.cfg -Y OUTDIR/run
#
#   EDGE_LISTEN=0.0.0.0           address the edge binds (UDP and TCP, and TLS when on)
#   EDGE_PORT=5060                SIP port (UDP and TCP)
#   EDGE_ADVERTISE=               public address put in Via/Record-Route when behind NAT (optional)
#   EDGE_NODES=127.0.0.1:5080     voxbridge nodes, comma separated host:port (their SIP_PORT)
#   EDGE_RTPENGINE=               rtpengine ng address host:port; empty: media goes direct to the nodes
#   EDGE_TLS_PORT=5061            SIP over TLS, on when EDGE_TLS_CERT and EDGE_TLS_KEY name PEM files
#   EDGE_TLS_CERT= EDGE_TLS_KEY=
#   EDGE_PIKE_PERIOD=2 EDGE_PIKE_DENSITY=30   flood: more than DENSITY requests in PERIOD s bans a source
#   EDGE_BAN_SECONDS=300          how long a flooding source or scanner stays banned
#   EDGE_CHILDREN=4               worker processes per transport
#   EDGE_DISPATCH_ALG=4           dispatcher algorithm: 4 round robin, 8 first live node in EDGE_NODES order
set -euo pipefail
OUT=${1:?usage: render.sh OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/run"
OUT=$(cd "$OUT" && pwd)

LISTEN=${EDGE_LISTEN:-0.0.0.0}
PORT=${EDGE_PORT:-5060}
NODES=${EDGE_NODES:-127.0.0.1:5080}
num() { [[ "$2" =~ ^[0-9]+$ ]] || { echo "render.sh: $1 must be a number (got '$2')" >&2; exit 2; }; }
num EDGE_PORT "$PORT"
for v in EDGE_PIKE_PERIOD EDGE_PIKE_DENSITY EDGE_BAN_SECONDS EDGE_CHILDREN EDGE_DISPATCH_ALG; do
  [ -z "${!v:-}" ] || num "$v" "${!v}"
done
adv=""
[ -z "${EDGE_ADVERTISE:-}" ] || adv=" advertise ${EDGE_ADVERTISE}:${PORT}"

cp "$HERE/kamailio.cfg" "$OUT/kamailio.cfg"
{
  echo "# Written by sip/kamailio/render.sh; edit the EDGE_* variables and render again."
  echo "listen=udp:${LISTEN}:${PORT}${adv}"
  echo "listen=tcp:${LISTEN}:${PORT}${adv}"
  echo "#!substdef \"!EDGE_DISPATCHER_LIST!${OUT}/dispatcher.list!g\""
  for v in EDGE_PIKE_PERIOD EDGE_PIKE_DENSITY EDGE_CHILDREN; do
    [ -z "${!v:-}" ] || echo "#!define $v ${!v}"
  done
  echo "#!substdef \"!EDGE_DISPATCH_ALG!${EDGE_DISPATCH_ALG:-4}!g\""
  # substdef: also replaced inside strings (the htable spec, log lines).
  echo "#!substdef \"!EDGE_BAN_SECONDS!${EDGE_BAN_SECONDS:-300}!g\""
  if [ -n "${EDGE_RTPENGINE:-}" ]; then
    echo "#!define WITH_RTPENGINE"
    echo "#!substdef \"!EDGE_RTPENGINE_SOCK!udp:${EDGE_RTPENGINE}!g\""
  fi
  if [ -n "${EDGE_TLS_CERT:-}" ] && [ -n "${EDGE_TLS_KEY:-}" ]; then
    TLS_PORT=${EDGE_TLS_PORT:-5061}
    num EDGE_TLS_PORT "$TLS_PORT"
    tadv=""
    [ -z "${EDGE_ADVERTISE:-}" ] || tadv=" advertise ${EDGE_ADVERTISE}:${TLS_PORT}"
    echo "listen=tls:${LISTEN}:${TLS_PORT}${tadv}"
    echo "#!define WITH_TLS"
    echo "#!substdef \"!EDGE_TLS_CONFIG!${OUT}/tls.cfg!g\""
    cat > "$OUT/tls.cfg" <<TLS
# Written by sip/kamailio/render.sh. Callers are not asked for a certificate here; mutual TLS
# per trunk belongs in a [server:<address>:<port>] profile with verify_certificate = yes.
[server:default]
method = TLSv1.2+
verify_certificate = no
require_certificate = no
certificate = ${EDGE_TLS_CERT}
private_key = ${EDGE_TLS_KEY}

[client:default]
method = TLSv1.2+
verify_certificate = no
require_certificate = no
TLS
  fi
} > "$OUT/edge-settings.cfg"

{
  echo "# voxbridge nodes (set 1): setid destination flags priority (first listed: highest priority)"
  IFS=',' read -ra list <<<"$NODES"
  prio=${#list[@]}
  for n in "${list[@]}"; do
    n=$(echo "$n" | tr -d '[:space:]')
    [ -n "$n" ] || continue
    [[ "$n" =~ ^[A-Za-z0-9.:_-]+:[0-9]+$ ]] || { echo "render.sh: EDGE_NODES entry '$n' is not host:port" >&2; exit 2; }
    echo "1 sip:${n} 0 ${prio}"
    prio=$((prio - 1))
  done
} > "$OUT/dispatcher.list"
echo "$OUT/kamailio.cfg"
