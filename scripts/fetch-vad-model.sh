#!/usr/bin/env bash
# Puts the Silero VAD model (MIT, v6.2) at .voxbridge/models/silero-vad/silero_vad.onnx for the
# default VAD (VAD_ENGINE=silero). Inside the project's machines it sits in ../shared/models (linked, never
# committed); elsewhere it is downloaded from the upstream repository at a pinned commit. Either
# way it is checked against its SHA-256. VOXBRIDGE_VAD_MODEL_URL points the download at a mirror.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.voxbridge/models/silero-vad
COMMIT=806dcba3f0b5d95282d0889a074954a2f8c6397b
SOURCE=${VOXBRIDGE_VAD_MODEL_URL:-https://raw.githubusercontent.com/snakers4/silero-vad/$COMMIT/src/silero_vad/data/silero_vad.onnx}
SUM=1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3

verify() { [ -f "$1" ] && echo "$SUM  $1" | sha256sum --quiet -c - >/dev/null 2>&1; }

[ -e "$DEST/silero_vad.onnx" ] && verify "$DEST/silero_vad.onnx" && exit 0
mkdir -p "$DEST"
SHARED=${VOXBRIDGE_SHARED_VAD:-../shared/models/silero-vad}
if verify "$SHARED/silero_vad.onnx"; then
  ln -sf "$(cd "$SHARED" && pwd)/silero_vad.onnx" "$DEST/silero_vad.onnx"
  exit 0
fi
echo "[setup] downloading the Silero VAD model from $SOURCE" >&2
tmp=$(mktemp "$DEST/.download.XXXXXX")
trap 'rm -f "$tmp"' EXIT
curl -fsSL --retry 2 -o "$tmp" "$SOURCE" || { echo "[setup] could not download the Silero VAD model; VAD_ENGINE=energy still works" >&2; exit 1; }
verify "$tmp" || { echo "[setup] checksum mismatch for the Silero VAD model" >&2; exit 1; }
mv "$tmp" "$DEST/silero_vad.onnx"
trap - EXIT
