// What the receive half of a packet costs the gateway, and what a native batched read would cost instead:
// a child process owns N UDP sockets on loopback and this process sends each one a 172-byte packet every
// 20 ms (as N RTP legs receive). The child reads them either with dgram (one 'message' callback per
// datagram: epoll, libuv's two recvmsg, a Buffer and rinfo object; what RtpEndpoint does today) or with
// the bench-only addon native/recv-drain.c (every socket drained once per 20 ms tick with recvmmsg into
// one buffer: one system call per socket per tick, no object per datagram). Prints the child's CPU per
// packet for both, alternated. The addon is compiled here with cc against Node's headers; it is a
// measurement, not part of the gateway.
//   npx tsx bench/media/recv-cost.ts [--sockets 400] [--seconds 10] [--rounds 2]
// Prints figures; asserts nothing.
import { execFileSync, fork } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Drain {
  open(port: number): number;
  port(fd: number): number;
  close(fd: number): number;
  drain(fds: Int32Array, out: Uint8Array, lens: Int32Array): number;
}
type Mode = 'dgram' | 'mmsg';
interface Stats {
  packets: number;
  cpuUs: number;
  systemUs: number;
}

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}
const here = path.dirname(fileURLToPath(import.meta.url));
const ADDON = path.resolve(here, '../../.voxbridge/bench/recv-drain.node');
const SLOT = 2048;

async function child(mode: Mode, sockets: number): Promise<void> {
  const send = (m: unknown) => process.send?.(m);
  let packets = 0;
  let touched = 0;
  const ports: number[] = [];
  let stop: () => void;
  if (mode === 'dgram') {
    const socks = await Promise.all(
      Array.from({ length: sockets }, async () => {
        const s = dgram.createSocket('udp4');
        await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
        s.on('message', (msg) => {
          packets++;
          touched += msg[0] ?? 0;
        });
        return s;
      }),
    );
    for (const s of socks) ports.push(s.address().port);
    const tick = setInterval(() => {}, 20); // the media clock runs either way
    stop = () => {
      clearInterval(tick);
      for (const s of socks) s.close();
    };
  } else {
    const addon = createRequire(import.meta.url)(ADDON) as Drain;
    const fds = Int32Array.from({ length: sockets }, () => {
      const fd = addon.open(0);
      if (fd < 0) throw new Error(`open: errno ${-fd}`);
      return fd;
    });
    for (const fd of fds) ports.push(addon.port(fd));
    const out = new Uint8Array(SLOT * sockets * 4);
    const lens = new Int32Array(sockets * 4);
    const tick = setInterval(() => {
      const n = addon.drain(fds, out, lens);
      for (let k = 0; k < n; k++) touched += out[k * SLOT] ?? 0;
      packets += n;
    }, 20);
    stop = () => {
      clearInterval(tick);
      for (const fd of fds) addon.close(fd);
    };
  }
  let mark = { packets: 0, cpu: process.cpuUsage() };
  process.on('message', (m: string) => {
    if (m === 'mark') {
      mark = { packets, cpu: process.cpuUsage() };
      send('marked');
    } else if (m === 'stats') {
      const cpu = process.cpuUsage(mark.cpu);
      send({ packets: packets - mark.packets, cpuUs: cpu.user + cpu.system, systemUs: cpu.system } satisfies Stats);
    } else if (m === 'stop') {
      stop();
      process.exit(touched >= 0 ? 0 : 1);
    }
  });
  send({ ports });
}

function build(): boolean {
  if (!existsSync('/usr/include/node/node_api.h')) return false;
  mkdirSync(path.dirname(ADDON), { recursive: true });
  execFileSync('cc', ['-O2', '-shared', '-fPIC', '-I/usr/include/node', path.join(here, 'native/recv-drain.c'), '-o', ADDON]);
  return true;
}

async function measure(mode: Mode, sockets: number, seconds: number): Promise<Stats> {
  const c = fork(fileURLToPath(import.meta.url), ['--child', mode, String(sockets)], { execArgv: process.execArgv });
  const next = () => new Promise<unknown>((r) => c.once('message', r));
  const { ports } = (await next()) as { ports: number[] };
  const tx = dgram.createSocket('udp4');
  await new Promise<void>((r) => tx.bind(0, '127.0.0.1', () => r()));
  const packet = Buffer.alloc(172, 0x55);
  const sender = setInterval(() => {
    for (const p of ports) tx.send(packet, p, '127.0.0.1');
  }, 20);
  await new Promise((r) => setTimeout(r, 1000)); // warm-up
  c.send('mark');
  await next();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  c.send('stats');
  const stats = (await next()) as Stats;
  clearInterval(sender);
  tx.close();
  c.send('stop');
  await new Promise((r) => c.once('exit', r));
  return stats;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] as Mode, Number(process.argv[4]));
} else {
  const sockets = arg('sockets', 400);
  const seconds = arg('seconds', 10);
  const rounds = arg('rounds', 2);
  if (!build()) {
    console.log('Node headers (/usr/include/node/node_api.h) not found: the native variant cannot be built here.');
    process.exit(0);
  }
  const results: Record<Mode, number[]> = { dgram: [], mmsg: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of (r % 2 === 0 ? ['dgram', 'mmsg'] : ['mmsg', 'dgram']) as Mode[]) {
      const s = await measure(mode, sockets, seconds);
      const us = s.cpuUs / Math.max(1, s.packets);
      results[mode].push(us);
      console.log(
        `round ${r + 1} ${mode.padEnd(5)}: ${s.packets} packets to ${sockets} sockets, ${us.toFixed(2)} µs CPU per packet received (${Math.round((s.systemUs / Math.max(1, s.cpuUs)) * 100)} % kernel), receiver ${((s.cpuUs / (seconds * 1e6)) * 100).toFixed(1)} % of a core`,
      );
    }
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;
  console.log(`median: dgram ${median(results.dgram).toFixed(2)} µs, recvmmsg per tick ${median(results.mmsg).toFixed(2)} µs of CPU per packet received`);
}
