# Sourced by the build scripts of the compiled parts (build-sphinx-decoder.sh, build-rtp-io.sh,
# build-tcp-send-queue.sh): `skip_if_built <out> <src> [--force]` exits when the output is newer than its
# source, `require_gcc <script name>` exits naming the package when gcc is missing, and
# `node_api_include <script name>` prints the directory holding node_api.h (exits when there is none).
skip_if_built() {
  if [[ -f "$1" && "$1" -nt "$2" && "${3:-}" != "--force" ]]; then exit 0; fi
}

require_gcc() {
  if ! command -v gcc >/dev/null 2>&1; then
    echo "$1: gcc not found; install the Debian package gcc" >&2
    exit 1
  fi
}

node_api_include() {
  local include="${NODE_INCLUDE:-}"
  if [[ -z "$include" ]]; then
    # The headers of the node that runs the gateway: <prefix>/include/node.
    include="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")/include/node"
  fi
  if [[ ! -f "$include/node_api.h" ]]; then
    echo "$1: node_api.h not found in $include; set NODE_INCLUDE to Node's include/node directory" >&2
    exit 1
  fi
  echo "$include"
}
