# voxbridge gateway image: Node 20 on Debian with the embedded speech engines.
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      espeak-ng apertium apertium-eng-spa pocketsphinx pocketsphinx-en-us libpocketsphinx-dev libsphinxbase-dev \
      lame sox gcc libc6-dev pkg-config liburing-dev ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npx tsc -p tsconfig.json && npm run -s build:web && bash scripts/fetch-model.sh && bash scripts/fetch-vad-model.sh && (test ! -f scripts/build-sphinx-decoder.sh || bash scripts/build-sphinx-decoder.sh) && bash scripts/build-rtp-io.sh && bash scripts/build-tcp-send-queue.sh
EXPOSE 8080 5060/udp 5060/tcp
# node flags for V8's young generation (HEAP_SEMI_SPACE_MB; scripts/lib/node-heap-flags.sh); exec keeps node as PID 1.
CMD ["bash", "-c", "flags=$(bash scripts/lib/node-heap-flags.sh) && exec node $flags bin/voxbridge.js serve"]
