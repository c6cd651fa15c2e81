#!/usr/bin/env bash
# Writes a runnable edge configuration into OUTDIR from EDGE_* variables (README "Edge: Kamailio"):
#   OUTDIR/kamailio.cfg        the routing logic (a copy of sip/kamailio/kamailio.cfg)
#   OUTDIR/edge-settings.cfg   listen sockets, nodes, rtpengine, TLS, flood thresholds
#   OUTDIR/dispatcher.list     the voxbridge nodes (set 1) and the carrier groups' gateways (sets 10, 11, …)
#   OUTDIR/carriers.cfg        which Request-URI host names which carrier group
#   OUTDIR/tls.cfg             when TLS is on: the server profiles (certificate, client certificate checks)
# Then:  kamailio -DD -E -f OUTDIR/kamailio.cfg -Y OUTDIR/run
#
#   EDGE_LISTEN=0.0.0.0           address the edge binds (UDP and TCP, and TLS when on)
#   EDGE_PORT=5060                SIP port (UDP and TCP)
#   EDGE_ADVERTISE=               public address put in Via/Record-Route when behind NAT (optional)
#   EDGE_NODES=127.0.0.1:5080     voxbridge nodes, comma separated host:port (their SIP_PORT)
#   EDGE_RTPENGINE=               rtpengine ng address host:port; empty: media goes direct to the nodes
#   EDGE_TLS_PORT=5061            SIP over TLS, on when EDGE_TLS_CERT and EDGE_TLS_KEY name PEM files
#   EDGE_TLS_CERT= EDGE_TLS_KEY=
#   EDGE_TLS_CLIENT_CA=           CA file: on EDGE_TLS_PORT callers are asked for a certificate, which is
#                                 verified against it when presented (not required there); empty: not asked
#   EDGE_TLS_TRUNKS=              mutual TLS per trunk: comma separated PORT=CAFILE; each PORT is a TLS
#                                 listener that requires a client certificate issued by CAFILE (the
#                                 handshake fails without one). Give each carrier its port. Needs a
#                                 concrete EDGE_LISTEN (Kamailio picks a profile by the local address).
#   EDGE_TLS_VERIFY_DEPTH=3       longest certificate chain accepted (callers' and carriers')
#   EDGE_TLS_CARRIER_CA=/etc/ssl/certs/ca-certificates.crt
#                                 CA file the edge verifies a carrier's server certificate against when
#                                 it dials one over TLS for a node (SIP_EDGE_OUTBOUND_PROXY); the host
#                                 name is checked by kamailio.cfg on the carrier's replies
#   EDGE_TLS_VERIFY_CARRIER=yes   no: carriers' certificates (chain and name) are not checked (test rigs only)
#   EDGE_OUTBOUND_SRTP=yes        nodes dialling out through the edge (SIP_EDGE_OUTBOUND_PROXY): carriers
#                                 reached over TLS (sips: or ;transport=tls) are offered SDES SRTP by the
#                                 edge's rtpengine; no: plain RTP to them too
#   EDGE_PIKE_PERIOD=2 EDGE_PIKE_DENSITY=30   flood: more than DENSITY requests in PERIOD s bans a source
#   EDGE_BAN_SECONDS=300          how long a flooding source or scanner stays banned
#   EDGE_CHILDREN=4               worker processes per transport
#   EDGE_DISPATCH_ALG=4           dispatcher algorithm: 4 round robin, 8 first live node in EDGE_NODES order
#   EDGE_PING_INTERVAL=10         seconds between OPTIONS probes of the nodes (and probed carrier gateways);
#                                 a node is taken out after 2 failed probes (a 503 while it is full,
#                                 draining or overloaded, or no answer) and put back after 2 answered 2xx
#   EDGE_CARRIERS=                carrier groups for nodes dialling out through the edge, space separated
#                                 NAME=GATEWAY,GATEWAY…; a GATEWAY is host:port[;transport=udp|tcp|tls],
#                                 listed in priority order. A node's dial whose Request-URI host is NAME
#                                 (the connection's host) goes to the first live gateway, and to the next
#                                 when one does not reply within 5 s or answers 500/502/503/504.
#   EDGE_CARRIER_PROBE=no         yes: the gateways are probed with OPTIONS like the nodes (EDGE_PING_INTERVAL), and
#                                 one that stops answering is skipped until it answers again
set -euo pipefail
OUT=${1:?usage: render.sh OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/run"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/trunk-listen.cfg.tmp"

LISTEN=${EDGE_LISTEN:-0.0.0.0}
PORT=${EDGE_PORT:-5060}
NODES=${EDGE_NODES:-127.0.0.1:5080}
num() { [[ "$2" =~ ^[0-9]+$ ]] || { echo "render.sh: $1 must be a number (got '$2')" >&2; exit 2; }; }
num EDGE_PORT "$PORT"
for v in EDGE_PIKE_PERIOD EDGE_PIKE_DENSITY EDGE_BAN_SECONDS EDGE_CHILDREN EDGE_DISPATCH_ALG; do
  [ -z "${!v:-}" ] || num "$v" "${!v}"
done
PING_INTERVAL=${EDGE_PING_INTERVAL:-10}
num EDGE_PING_INTERVAL "$PING_INTERVAL"
# 0 would turn the dispatcher's probing off altogether: nodes that refuse calls would never be taken out.
[ "$((10#$PING_INTERVAL))" -ge 1 ] || { echo "render.sh: EDGE_PING_INTERVAL must be at least 1 (got '$PING_INTERVAL')" >&2; exit 2; }
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
  echo "#!substdef \"!EDGE_PING_INTERVAL!$((10#$PING_INTERVAL))!g\""
  # substdef: also replaced inside strings (the htable spec, log lines).
  echo "#!substdef \"!EDGE_BAN_SECONDS!${EDGE_BAN_SECONDS:-300}!g\""
  if [ -n "${EDGE_RTPENGINE:-}" ]; then
    case "${EDGE_OUTBOUND_SRTP:-yes}" in
      yes) echo "#!define WITH_OUTBOUND_SRTP" ;;
      no) ;;
      *) echo "render.sh: EDGE_OUTBOUND_SRTP must be yes or no (got '${EDGE_OUTBOUND_SRTP}')" >&2; exit 2 ;;
    esac
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
    # The chain is checked by the TLS module (tls.cfg [client:default]); the name by kamailio.cfg.
    [ "${EDGE_TLS_VERIFY_CARRIER:-yes}" != yes ] || echo "#!define WITH_CARRIER_NAME_CHECK"
    echo "#!substdef \"!EDGE_TLS_CONFIG!${OUT}/tls.cfg!g\""
    file() { [ -r "$2" ] || { echo "render.sh: $1 names '$2', which is not a readable file" >&2; exit 2; }; }
    file EDGE_TLS_CERT "$EDGE_TLS_CERT"
    file EDGE_TLS_KEY "$EDGE_TLS_KEY"
    DEPTH=${EDGE_TLS_VERIFY_DEPTH:-3}
    num EDGE_TLS_VERIFY_DEPTH "$DEPTH"
    # Verified client certificates are passed on to the nodes (X-VB-Client-Cert), which check them
    # against the trunk's own CA and subject (voxbridge admin connection … --require-client-cert).
    {
      echo "# Written by sip/kamailio/render.sh from the EDGE_TLS_* variables."
      echo "[server:default]"
      echo "method = TLSv1.2+"
      echo "certificate = ${EDGE_TLS_CERT}"
      echo "private_key = ${EDGE_TLS_KEY}"
      if [ -n "${EDGE_TLS_CLIENT_CA:-}" ]; then
        file EDGE_TLS_CLIENT_CA "$EDGE_TLS_CLIENT_CA"
        echo "# Callers are asked for a certificate and it is verified when presented; none is required here."
        echo "verify_certificate = yes"
        echo "require_certificate = no"
        echo "ca_list = ${EDGE_TLS_CLIENT_CA}"
        echo "verify_depth = ${DEPTH}"
      else
        echo "verify_certificate = no"
        echo "require_certificate = no"
      fi
      echo
      echo "[client:default]"
      echo "method = TLSv1.2+"
      case "${EDGE_TLS_VERIFY_CARRIER:-yes}" in
        yes)
          CARRIER_CA=${EDGE_TLS_CARRIER_CA:-/etc/ssl/certs/ca-certificates.crt}
          file EDGE_TLS_CARRIER_CA "$CARRIER_CA"
          echo "# A carrier dialled over TLS must present a certificate that chains to this CA list."
          echo "verify_certificate = yes"
          echo "require_certificate = yes"
          echo "ca_list = ${CARRIER_CA}"
          echo "verify_depth = ${DEPTH}"
          ;;
        no)
          echo "# EDGE_TLS_VERIFY_CARRIER=no: carriers' certificates are not checked."
          echo "verify_certificate = no"
          echo "require_certificate = no"
          ;;
        *) echo "render.sh: EDGE_TLS_VERIFY_CARRIER must be yes or no (got '${EDGE_TLS_VERIFY_CARRIER}')" >&2; exit 2 ;;
      esac
      if [ -n "${EDGE_TLS_TRUNKS:-}" ]; then
        [ "$LISTEN" != "0.0.0.0" ] && [ "$LISTEN" != "::" ] || {
          echo "render.sh: EDGE_TLS_TRUNKS needs EDGE_LISTEN set to the address callers connect to (Kamailio picks a TLS profile by the local address)" >&2
          exit 2
        }
        IFS=',' read -ra trunks <<<"$EDGE_TLS_TRUNKS"
        for t in "${trunks[@]}"; do
          t=$(echo "$t" | sed 's/^[[:space:]]*//;s/[[:space:]]*$//')
          [ -n "$t" ] || continue
          [[ "$t" =~ ^([0-9]+)=(.+)$ ]] || { echo "render.sh: EDGE_TLS_TRUNKS entry '$t' is not PORT=CAFILE" >&2; exit 2; }
          tport=${BASH_REMATCH[1]}
          tca=${BASH_REMATCH[2]}
          file "EDGE_TLS_TRUNKS ($tport)" "$tca"
          [ "$tport" != "$TLS_PORT" ] && [ "$tport" != "$PORT" ] || { echo "render.sh: EDGE_TLS_TRUNKS port $tport is already the edge's SIP or TLS port" >&2; exit 2; }
          echo
          echo "# Trunk port ${tport}: a client certificate issued by ${tca} is required (the handshake fails without one)."
          echo "[server:${LISTEN}:${tport}]"
          echo "method = TLSv1.2+"
          echo "certificate = ${EDGE_TLS_CERT}"
          echo "private_key = ${EDGE_TLS_KEY}"
          echo "verify_certificate = yes"
          echo "require_certificate = yes"
          echo "ca_list = ${tca}"
          echo "verify_depth = ${DEPTH}"
          echo "listen=tls:${LISTEN}:${tport}${EDGE_ADVERTISE:+ advertise ${EDGE_ADVERTISE}:${tport}}" >>"$OUT/trunk-listen.cfg.tmp"
        done
      fi
    } > "$OUT/tls.cfg"
    if [ -f "$OUT/trunk-listen.cfg.tmp" ]; then
      cat "$OUT/trunk-listen.cfg.tmp"
      rm -f "$OUT/trunk-listen.cfg.tmp"
    fi
  fi
} > "$OUT/edge-settings.cfg"

case "${EDGE_CARRIER_PROBE:-no}" in
  yes) CARRIER_FLAGS=8 ;;
  no) CARRIER_FLAGS=0 ;;
  *) echo "render.sh: EDGE_CARRIER_PROBE must be yes or no (got '${EDGE_CARRIER_PROBE}')" >&2; exit 2 ;;
esac
# dispatcher.list: setid destination flags priority (first listed: highest priority); flag 8 probes.
{
  echo "# voxbridge nodes (set 1), probed with OPTIONS"
  IFS=',' read -ra list <<<"$NODES"
  prio=${#list[@]}
  for n in "${list[@]}"; do
    n=$(echo "$n" | tr -d '[:space:]')
    [ -n "$n" ] || continue
    [[ "$n" =~ ^[A-Za-z0-9.:_-]+:[0-9]+$ ]] || { echo "render.sh: EDGE_NODES entry '$n' is not host:port" >&2; exit 2; }
    echo "1 sip:${n} 8 ${prio}"
    prio=$((prio - 1))
  done
} > "$OUT/dispatcher.list"
{
  echo "# Written by sip/kamailio/render.sh from EDGE_CARRIERS: the carrier group a node's dial names."
  echo "route[CARRIER_SET] {"
  echo "	\$var(carrier_set) = 0;"
  set=10
  read -ra groups <<<"${EDGE_CARRIERS:-}"
  for g in "${groups[@]}"; do
    [[ "$g" =~ ^([A-Za-z0-9.-]+)=(.+)$ ]] || { echo "render.sh: EDGE_CARRIERS entry '$g' is not NAME=GATEWAY,GATEWAY…" >&2; exit 2; }
    name=$(echo "${BASH_REMATCH[1]}" | tr '[:upper:]' '[:lower:]')
    IFS=',' read -ra gws <<<"${BASH_REMATCH[2]}"
    echo "# carrier group ${name} (set ${set})" >>"$OUT/dispatcher.list"
    prio=${#gws[@]}
    for gw in "${gws[@]}"; do
      [[ "$gw" =~ ^[A-Za-z0-9.:_-]+:[0-9]+(\;transport=(udp|tcp|tls))?$ ]] || {
        echo "render.sh: EDGE_CARRIERS gateway '$gw' of ${name} is not host:port[;transport=udp|tcp|tls]" >&2
        exit 2
      }
      echo "${set} sip:${gw} ${CARRIER_FLAGS} ${prio}" >>"$OUT/dispatcher.list"
      prio=$((prio - 1))
    done
    echo "	if (\$(rd{s.tolower}) == \"${name}\") \$var(carrier_set) = ${set};"
    set=$((set + 1))
  done
  echo "}"
} > "$OUT/carriers.cfg"
echo "$OUT/kamailio.cfg"
