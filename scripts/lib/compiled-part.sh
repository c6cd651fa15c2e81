# Sourced by the build scripts of the compiled parts (build-sphinx-decoder.sh, build-rtp-io.sh):
# `skip_if_built <out> <src> [--force]` exits when the output is newer than its source, and
# `require_gcc <script name>` exits naming the package when gcc is missing.
skip_if_built() {
  if [[ -f "$1" && "$1" -nt "$2" && "${3:-}" != "--force" ]]; then exit 0; fi
}

require_gcc() {
  if ! command -v gcc >/dev/null 2>&1; then
    echo "$1: gcc not found; install the Debian package gcc" >&2
    exit 1
  fi
}
