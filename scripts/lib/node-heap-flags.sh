#!/usr/bin/env bash
# Prints the node flags the gateway starts with (scripts/run.sh, the image's CMD): V8's young generation
# at HEAP_SEMI_SPACE_MB per semi-space (default 32; 0: V8's own size). Node takes this only at start,
# unlike HEAP_GROWING_PERCENT, which the gateway sets itself. Why 32: V8's own 16 MB promoted enough of
# the media path's short-lived objects that two nodes carrying 1,000 bridged calls lost 0.14-1.75 %;
# with 32, 0.03-0.08 % in four runs of eight (0.34-17.6 % in the others; BENCHMARKS.md, twenty-fifth pass),
# for 32 MB more per process. 64 did no better.
set -euo pipefail
mb=${HEAP_SEMI_SPACE_MB:-32}
if ! [[ $mb =~ ^[0-9]+$ ]] || ((mb > 1024)); then
  echo "HEAP_SEMI_SPACE_MB must be a whole number of MB from 0 to 1024, not '$mb'" >&2
  exit 2
fi
if ((mb > 0)); then echo "--max-semi-space-size=$mb"; fi
