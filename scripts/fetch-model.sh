#!/usr/bin/env bash
# Puts the 8 kHz telephone-band acoustic model (hub4wsj_sc_8k) at .voxbridge/models/hub4wsj_sc_8k.
# Debian's pocketsphinx-en-us model is 16 kHz and returns nonsense on phone audio.
# Inside the project's machines the model sits in ../shared/models (linked, never committed);
# elsewhere it is downloaded from the public CMU Sphinx tree at a pinned commit. Either way every
# file is checked against its SHA-256. VOXBRIDGE_MODEL_URL points the download at a mirror of that
# directory (same files, same sums).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.voxbridge/models/hub4wsj_sc_8k
COMMIT=9e3a5ea6444eae9c0bae96ffa0a1fecadc181f1e
SOURCE=${VOXBRIDGE_MODEL_URL:-https://raw.githubusercontent.com/cmusphinx/pocketsphinx/$COMMIT/model/hmm/en_US/hub4wsj_sc_8k}
SUMS='fadbb554fa96020a349f55dea2a09bb3d393d647ab64d64b489009b03c3756f9  feat.params
b3717ece153eaafeae5c03fb5b9a1397880c4baa44ad04be30a8cad3667c1977  mdef
d260b59ca2a562e4fb39350bbecaf20b04c0e57a9a8ee3e9e83e4abdd0799ad6  means
8f80d9ecdab37a490f259a58ec527fbcaa59d2ff60935b062e6dd96003880bb9  noisedict
8af0fa4abc6854bcb7d63a1a881d68737a6f3716a1c9aa1e65ca5e193ea3e789  sendump
b7acc51d0e199f3f7f8071741b780d1936ebfa174632e2bd70305322dd947715  transition_matrices
898f723eec791489d87c5323e683615d6cc3cab57995431b7e6bd0a34990e4db  variances'

verify() { (cd "$1" && echo "$SUMS" | sha256sum --quiet -c -) >/dev/null 2>&1; }

[ -d "$DEST" ] && verify "$DEST" && exit 0
mkdir -p .voxbridge/models
rm -rf "$DEST"
SHARED=${VOXBRIDGE_SHARED_MODELS:-../shared/models/pocketsphinx/hub4wsj_sc_8k}
if [ -d "$SHARED" ] && verify "$SHARED"; then
  ln -s "$(cd "$SHARED" && pwd)" "$DEST"
  exit 0
fi
echo "[setup] downloading the 8 kHz acoustic model from $SOURCE" >&2
tmp=$(mktemp -d .voxbridge/models/.download.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for f in $(echo "$SUMS" | awk '{print $2}'); do
  curl -fsSL --retry 2 -o "$tmp/$f" "$SOURCE/$f" || { echo "[setup] could not download $f; put the model at $DEST by hand" >&2; exit 1; }
done
verify "$tmp" || { echo "[setup] checksum mismatch for the downloaded model" >&2; exit 1; }
chmod 755 "$tmp"
mv "$tmp" "$DEST"
trap - EXIT
