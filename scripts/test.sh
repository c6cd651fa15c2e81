#!/usr/bin/env bash
# The whole suite in stages (the README's `npm test`): setup, lint, typecheck, unit tests (no
# services), then integration and end-to-end tests (PostgreSQL, Redis, SIPp, rtpengine).
# Every stage runs even when an earlier one failed, so one run shows everything that is wrong;
# the failed stages are named at the end and the exit status is non-zero.
#   VOXBRIDGE_TEST_REPORT_DIR=dir   also write each vitest run's JSON report to dir/<stage>.json
#   extra arguments are passed to both vitest runs
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
stage() {
  local name=$1; shift
  printf '\n\033[1;34m== stage: %s\033[0m\n' "$name" >&2
  if "$@"; then
    printf '\033[1;32m== stage %s passed\033[0m\n' "$name" >&2
  else
    printf '\033[1;31m== stage %s FAILED\033[0m\n' "$name" >&2
    failed+=("$name")
  fi
}

vitest_stage() {
  local name=$1; shift
  local report=()
  if [ -n "${VOXBRIDGE_TEST_REPORT_DIR:-}" ]; then
    report=(--reporter=default --reporter=json "--outputFile=$VOXBRIDGE_TEST_REPORT_DIR/$name.json")
  fi
  npx vitest run "$@" "${report[@]}" "${EXTRA_ARGS[@]}"
}

EXTRA_ARGS=("$@")

# Setup first: without the packages, databases and build nothing below means anything.
stage setup bash scripts/setup.sh --test
if [ ${#failed[@]} -gt 0 ]; then
  echo "stage failed: setup" >&2
  exit 1
fi
stage lint npm run -s lint
stage typecheck npm run -s typecheck
stage unit vitest_stage unit test/unit/
stage integration+e2e vitest_stage services test/integration/ test/e2e/

if [ ${#failed[@]} -gt 0 ]; then
  echo "stages failed: ${failed[*]}" >&2
  exit 1
fi
echo "all stages passed" >&2
