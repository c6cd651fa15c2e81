#!/usr/bin/env bash
# Builds the streaming socket's TCP addon (src/stream/native/tcp-send-queue.c: TCP_NOTSENT_LOWAT, which
# Node cannot set, direct sends, and the batched reads of tick-reader.ts) into
# .voxbridge/native/tcp-send-queue.node. Idempotent: rebuilds only when the source is newer. Needs gcc and
# Node's headers (node_api.h: /usr/include/node, or NODE_INCLUDE).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/src/stream/native/tcp-send-queue.c"
out="$root/.voxbridge/native/tcp-send-queue.node"

# shellcheck source=lib/compiled-part.sh
source "$root/scripts/lib/compiled-part.sh"
skip_if_built "$out" "$src" "${1:-}"
require_gcc build-tcp-send-queue
include="$(node_api_include build-tcp-send-queue)"

mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -I"$include" -o "$tmp" "$src"
mv -f "$tmp" "$out"
echo "build-tcp-send-queue: built $out"
