// CPU per UDP send with dgram's default address lookup (dns.lookup: an IP literal is answered on the
// next tick), with the media sockets' immediate one (rtp/literal-lookup.ts), and on a connected
// socket (no address per send), alternated in one process. 172-byte datagrams (an RTP G.711 packet)
// to a socket on loopback that reads them (its reads are counted in the figure too).
//   npx tsx bench/media/send-cost.ts [--packets 100000] [--rounds 4]
// Prints figures; asserts nothing.
import dgram from 'node:dgram';
import { literalLookup } from '../../src/telephony/rtp/literal-lookup.js';
import { numberArg, median } from '../bench-args.js';

const PACKETS = numberArg('packets', 100_000);
const ROUNDS = numberArg('rounds', 4);
const BATCH = 200; // packets per loop turn, as a tick of 200 legs sends

async function bind(s: dgram.Socket): Promise<dgram.Socket> {
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

const rx = await bind(dgram.createSocket('udp4'));
let received = 0;
rx.on('message', () => received++);
const port = rx.address().port;

async function run(tx: dgram.Socket, connected: boolean): Promise<{ usPerSend: number; sysShare: number }> {
  if (connected) await new Promise<void>((r) => tx.connect(port, '127.0.0.1', () => r()));
  const cpu0 = process.cpuUsage();
  for (let sent = 0; sent < PACKETS; sent += BATCH) {
    if (connected) for (let i = 0; i < BATCH; i++) tx.send(Buffer.allocUnsafe(172).fill(i));
    else for (let i = 0; i < BATCH; i++) tx.send(Buffer.allocUnsafe(172).fill(i), port, '127.0.0.1');
    // Let deferred sends go out and the receiver read, as the event loop does between ticks.
    await new Promise((r) => setImmediate(r));
  }
  const cpu = process.cpuUsage(cpu0);
  return { usPerSend: (cpu.user + cpu.system) / PACKETS, sysShare: cpu.system / (cpu.user + cpu.system) };
}

/** Each variant and how the summary names it. */
const LABELS: Record<string, string> = { default: 'default lookup', literal: 'immediate literal lookup', connected: 'connected' };
const KINDS = Object.keys(LABELS);
const byKind: Record<string, number[]> = Object.fromEntries(KINDS.map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const kind of r % 2 === 0 ? KINDS : [...KINDS].reverse()) {
    const tx = await bind(kind === 'default' ? dgram.createSocket('udp4') : dgram.createSocket({ type: 'udp4', lookup: literalLookup() }));
    const x = await run(tx, kind === 'connected');
    tx.close();
    byKind[kind]?.push(x.usPerSend);
    console.log(`round ${r + 1} ${kind.padEnd(9)}: ${x.usPerSend.toFixed(2)} µs CPU per send (${Math.round(x.sysShare * 100)} % kernel)`);
  }
}
console.log(`median: ${KINDS.map((k) => `${LABELS[k]} ${median(byKind[k] ?? []).toFixed(2)} µs`).join(', ')} per send (received ${received})`);
rx.close();
