// What one audio.input message costs the gateway's side to receive, below the session pipeline: a child
// process runs a `ws` server (as src/stream/server.ts configures it: no compression) and this process
// opens N client sockets, each sending a 20 ms audio.input message every 20 ms in one of four phases
// 5 ms apart (as the media bench's socket clients do). The child either only counts the messages
// (`count`: the kernel's TCP receive, libuv's read, ws's framing and unmasking, the 'message' event) or
// also parses each one and cuts its audio into frames (`parse`: parseClientMessage, base64 and µ-law
// decode, the Framer), as StreamConnection does before LiveSession.pushAudio. Prints the child's CPU
// per message for each mode, alternated. Mode `tick` does what `parse` does with the sockets read as the
// gateway reads them by default (src/stream/tick-reader.ts: epoll and recv(2) from the addon at each 5 ms
// sub-tick of a media clock, the text frames parsed there). Mode `net` takes ws's reader off each socket and
// counts Node's reads alone (diagnostic: ws internals).
//   [WS_RECV_MODES=parse,tick] [WS_RECV_PROF=<dir>: a CPU profile of each child]
//   npx tsx bench/stream/ws-recv-cost.ts [--sockets 400] [--seconds 10] [--rounds 2]
// Prints figures; asserts nothing.
import { fork } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { answerWindows, measureWindow, nextMessage, type WindowStats } from '../media/child-window.js';
import { parseClientMessage } from '../../src/stream/index.js';
import { Framer, MediaClock, mulawDecodeInto } from '../../src/media/index.js';
import { StreamTickReader } from '../../src/stream/tick-reader.js';
import { numberArg, median } from '../bench-args.js';

type Mode = 'net' | 'count' | 'parse' | 'tick';
const MODES: Mode[] = (process.env.WS_RECV_MODES?.split(',') as Mode[] | undefined) ?? ['net', 'count', 'parse', 'tick'];

async function child(mode: Mode): Promise<void> {
  const send = (m: unknown) => process.send?.(m);
  let messages = 0;
  let frames = 0;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const clock = mode === 'tick' ? new MediaClock(20, 10).setSubTicks(4) : null;
  const tickReader = clock && StreamTickReader.on(clock);
  if (clock && !tickReader) throw new Error('no tick reader (addon not built?)');
  wss.on('connection', (ws) => {
    const pcm = new Int16Array(1600);
    const framer = new Framer(() => frames++);
    if (mode === 'net') {
      // ws's own reader taken off its socket: what Node's net read alone costs (each message is one
      // segment on loopback, so reads stand in for messages; close frames are not looked for).
      const socket = (ws as unknown as { _socket: Socket })._socket;
      socket.removeAllListeners('data');
      socket.on('data', () => messages++);
      return;
    }
    ws.on('message', (data: Buffer) => {
      messages++;
      if (mode === 'count') return;
      const parsed = parseClientMessage(data, 1 << 20);
      if (!parsed.ok || parsed.msg.type !== 'audio.input') throw new Error('unexpected message');
      const bytes = parsed.msg.payload;
      framer.push(mulawDecodeInto(bytes, pcm).subarray(0, bytes.length));
    });
    if (tickReader) {
      ws.pause();
      if (!tickReader.take(ws)) throw new Error('socket not taken');
    }
  });
  answerWindows(
    send,
    () => messages,
    () => {
      wss.close();
      clock?.stop();
      return (mode === 'parse' || mode === 'tick') && frames === 0 ? 1 : 0;
    },
  );
  const address = wss.address();
  send({ port: typeof address === 'object' && address ? address.port : 0 });
}

const MESSAGE = JSON.stringify({
  type: 'audio.input',
  speaker: 'customer',
  audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: Buffer.alloc(160, 0x55).toString('base64') },
});

async function measure(mode: Mode, sockets: number, seconds: number): Promise<WindowStats> {
  const c = fork(fileURLToPath(import.meta.url), ['--child', mode], {
    execArgv: [...process.execArgv, ...(process.env.WS_RECV_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WS_RECV_PROF}`] : [])],
  });
  const { port } = await nextMessage<{ port: number }>(c);
  const clients = await Promise.all(
    Array.from(
      { length: sockets },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        }),
    ),
  );
  let phase = 0;
  const sender = setInterval(() => {
    for (let i = phase; i < clients.length; i += 4) clients[i]?.send(MESSAGE);
    phase = (phase + 1) % 4;
  }, 5);
  const stats = await measureWindow<WindowStats>(c, seconds); // the first second a warm-up
  clearInterval(sender);
  for (const ws of clients) ws.terminate();
  c.send('stop');
  await new Promise((r) => c.once('exit', r));
  return stats;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] as Mode);
} else {
  const sockets = numberArg('sockets', 400);
  const seconds = numberArg('seconds', 10);
  const rounds = numberArg('rounds', 2);
  const results = { net: [] as number[], count: [] as number[], parse: [] as number[], tick: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
      const s = await measure(mode, sockets, seconds);
      const us = s.cpuUs / Math.max(1, s.count);
      results[mode].push(us);
      console.log(
        `round ${r + 1} ${mode.padEnd(5)}: ${s.count} messages from ${sockets} sockets, ${us.toFixed(2)} µs CPU per message (${Math.round((s.systemUs / Math.max(1, s.cpuUs)) * 100)} % kernel), receiver ${((s.cpuUs / (seconds * 1e6)) * 100).toFixed(1)} % of a core`,
      );
    }
  }
  console.log(`median µs of CPU per audio.input message received: ${MODES.map((m) => `${m} ${median(results[m]).toFixed(2)}`).join(', ')}`);
  process.exit(0);
}
