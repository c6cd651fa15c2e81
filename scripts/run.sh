#!/usr/bin/env bash
# Sets up and runs the gateway on its embedded defaults (local PostgreSQL and Redis, embedded speech
# engines), creating a demo organization and API key on first run, and prints how to call it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p .voxbridge
export DATABASE_URL=${DATABASE_URL:-postgres://voxbridge:voxbridge@127.0.0.1:5432/voxbridge}
HTTP_PORT=${HTTP_PORT:-8080}
# Development default: webhook endpoints may be plain http on loopback (README "Webhooks").
export WEBHOOKS_ALLOW_LOOPBACK_HTTP=${WEBHOOKS_ALLOW_LOOPBACK_HTTP:-true}
export HTTP_PORT
KEY_FILE=.voxbridge/demo-key.json
if [ ! -s "$KEY_FILE" ]; then
  org=$(node bin/voxbridge.js admin org create --name "demo" --credits 10000 --features ai_agent,sip)
  org_id=$(printf '%s' "$org" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).id))')
  node bin/voxbridge.js admin key create --org "$org_id" > "$KEY_FILE"
  chmod 600 "$KEY_FILE"
fi
KEY=$(node -e 'console.log(require("./'"$KEY_FILE"'").key)')
BASE=${PUBLIC_URL:-http://127.0.0.1:$HTTP_PORT}
cat <<TXT

  voxbridge is starting on $BASE (SIP on udp/tcp ${SIP_PORT:-5060})
  API key (saved in $KEY_FILE): $KEY

  Create a session:
    curl -s $BASE/v1/sessions -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
      -d '{"mode":"bidirectional_translation","source_language":"en","target_language":"es"}'
  Then open the returned stream.url with ?token=<stream.token> and send audio.input messages.
  API reference: $BASE/v1/openapi.json · health: $BASE/readyz · metrics: $BASE/metrics

TXT
# V8's young generation is sized at start (HEAP_SEMI_SPACE_MB, scripts/lib/node-heap-flags.sh).
heap_flags=$(bash scripts/lib/node-heap-flags.sh)
# shellcheck disable=SC2086 # empty when HEAP_SEMI_SPACE_MB=0
exec node $heap_flags bin/voxbridge.js serve
