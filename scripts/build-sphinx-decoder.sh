#!/usr/bin/env bash
# Builds the streaming pocketsphinx decoder (src/speech/stt/pocketsphinx/vb-sphinx-decoder.c)
# into .voxbridge/bin/vb-sphinx-decoder. Idempotent: rebuilds only when the source is newer.
# Needs gcc and the Debian packages libpocketsphinx-dev and libsphinxbase-dev (headers).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/src/speech/stt/pocketsphinx/vb-sphinx-decoder.c"
out="$root/.voxbridge/bin/vb-sphinx-decoder"

# shellcheck source=lib/compiled-part.sh
source "$root/scripts/lib/compiled-part.sh"
skip_if_built "$out" "$src" "${1:-}"
require_gcc build-sphinx-decoder

if pkg-config --exists pocketsphinx 2>/dev/null; then
  # shellcheck disable=SC2207
  flags=($(pkg-config --cflags --libs pocketsphinx))
else
  flags=(-I/usr/include/sphinxbase -I/usr/include/pocketsphinx -I/usr/include/x86_64-linux-gnu/sphinxbase -lpocketsphinx -lsphinxbase)
fi

if ! echo '#include <pocketsphinx.h>' | gcc -E "${flags[@]}" -x c - >/dev/null 2>&1; then
  echo "build-sphinx-decoder: pocketsphinx headers not found." >&2
  echo "  install them with: apt-get install -y libpocketsphinx-dev libsphinxbase-dev pkg-config" >&2
  exit 1
fi

mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
gcc -O2 -Wall -Wextra -Wno-unused-parameter -o "$tmp" "$src" "${flags[@]}" -lm
mv -f "$tmp" "$out"
echo "build-sphinx-decoder: built $out"
