#!/usr/bin/env bash
# Builds the batched RTP I/O addon (src/telephony/rtp/native/*.c, MEDIA_IO=native) into
# .voxbridge/native/rtp-io.node. Idempotent: rebuilds only when a source is newer.
# Needs gcc and Node's headers (node_api.h: /usr/include/node from the nodejs package, or NODE_INCLUDE);
# with liburing's headers (Debian liburing-dev) a tick's reads and sends each go in one io_uring submission,
# without them one recvmmsg per socket and one sendto per packet.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/src/telephony/rtp/native"
sources=("$dir/rtp-io.c" "$dir/send-thread.c" "$dir/recv-thread.c" "$dir/g711.c")
out="$root/.voxbridge/native/rtp-io.node"

# shellcheck source=lib/compiled-part.sh
source "$root/scripts/lib/compiled-part.sh"
# shellcheck disable=SC2012 # the newest of our own file names, none with odd characters
skip_if_built "$out" "$(ls -t "$dir"/*.c "$dir"/*.h | head -1)" "${1:-}"
require_gcc build-rtp-io

include="$(node_api_include build-rtp-io)"

uring=()
if echo '#include <liburing.h>' | gcc -E -x c - >/dev/null 2>&1; then
  uring=(-DVOXBRIDGE_URING -luring)
else
  echo "build-rtp-io: liburing headers not found (apt-get install liburing-dev): building without io_uring" >&2
fi

mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -pthread -I"$include" -o "$tmp" "${sources[@]}" "${uring[@]}"
mv -f "$tmp" "$out"
echo "build-rtp-io: built $out${uring:+ (with io_uring)}"
