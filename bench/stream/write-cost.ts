// What one audio.output frame costs the gateway's process to write: `ws.send` against the addon's direct
// send (src/stream/direct-send.ts), on N real WebSocket connections to a reader in another process.
//   npx tsx bench/stream/write-cost.ts [--connections 400] [--seconds 6] [--rounds 3]
// Every 20 ms each connection gets one 380-byte audio.output message, as at N RTP→socket calls; the ways
// alternate round by round. Prints, per round and way: CPU (user + system) per frame and the event loop's
// utilization. On loopback the reader's TCP receive path runs inside the writer's system call, so both
// ways include it. Prints figures; asserts nothing.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { WebSocketServer, type WebSocket } from 'ws';
import { DirectTextSender } from '../../src/stream/direct-send.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const connections = arg('connections', 400);
const seconds = arg('seconds', 6);
const rounds = arg('rounds', 3);

const READER = `
const WebSocket = require(${JSON.stringify(createRequire(import.meta.url).resolve('ws'))});
const [url, n] = [process.argv[1], Number(process.argv[2])];
let open = 0, messages = 0;
for (let i = 0; i < n; i++) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on('open', () => { if (++open === n) console.log('open'); });
  ws.on('message', () => messages++);
}
process.stdin.on('data', () => console.log(String(messages)));
`;

const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
await once(wss, 'listening');
const peers: { ws: WebSocket; direct: DirectTextSender }[] = [];
wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
  const direct = DirectTextSender.for(req.socket);
  if (!direct) throw new Error('the tcp-send-queue addon did not load (bash scripts/build-tcp-send-queue.sh)');
  peers.push({ ws, direct });
});
const reader = spawn(process.execPath, ['-e', READER, `ws://127.0.0.1:${(wss.address() as { port: number }).port}`, String(connections)], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const lines = createInterface({ input: reader.stdout })[Symbol.asyncIterator]();
await lines.next(); // 'open'
while (peers.length < connections) await new Promise((r) => setTimeout(r, 10));

const payload = Buffer.alloc(160, 0x55).toString('base64');
let sequence = 0;
const text = () =>
  `{"type":"audio.output","sequence":${++sequence},"timestamp_ms":${sequence * 20},"speaker":"customer_original","audio":{"encoding":"mulaw","sample_rate_hz":8000,"payload":"${payload}"}}`;
const written = () => undefined;
const ways: Record<string, () => void> = {
  ws: () => {
    for (const p of peers) p.ws.send(text(), written);
  },
  direct: () => {
    for (const p of peers) {
      const t = text();
      if (p.direct.send(t, written) === 'refused') p.ws.send(t, written);
    }
  },
};

async function round(way: string): Promise<void> {
  const tick = ways[way]!;
  const ticks = (seconds * 1000) / 20;
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  for (let done = 0; done < ticks; done++) {
    tick();
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + (done + 1) * 20 - performance.now())));
  }
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const frames = ticks * connections;
  console.log(
    `${way.padEnd(6)} ${connections} connections: ${((cpu.user + cpu.system) / frames).toFixed(2)} µs CPU per frame (${((100 * cpu.system) / (cpu.user + cpu.system)).toFixed(0)} % system), loop ${(100 * elu.utilization).toFixed(0)} % busy`,
  );
}

for (let r = 0; r < rounds; r++) for (const way of r % 2 ? ['direct', 'ws'] : ['ws', 'direct']) await round(way);
reader.stdin.write('count\n');
const counted = Number((await lines.next()).value);
console.log(`the reader got ${counted} of ${sequence} messages`);
reader.kill();
for (const p of peers) p.ws.terminate();
wss.close();
