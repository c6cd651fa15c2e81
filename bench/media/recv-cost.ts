// What the receive half of a packet costs the gateway, with dgram and with the batched reader of
// MEDIA_IO=native: a child process owns N UDP sockets on loopback and this process sends each one a
// 172-byte packet every 20 ms (as N RTP legs receive). The child reads them either with dgram (one
// 'message' callback per datagram: epoll, libuv's two recvmsg, a Buffer and rinfo object) or through
// rtp/native-io.ts (every socket read once per 20 ms media tick into one buffer, io_uring where it can, kernel
// arrival times kept). With --echo 1 the child sends each packet back from the socket that got it, so
// the figure is a leg's receive plus send; mode native-connected connects each socket to its sender
// first, as a leg's is to its settled source (MEDIA_IO_CONNECT). Prints the child's CPU per packet for
// each mode, alternated.
//   npx tsx bench/media/recv-cost.ts [--sockets 400] [--seconds 10] [--rounds 2] [--echo 0] [--modes dgram,native]
// Prints figures; asserts nothing.
import { fork } from 'node:child_process';
import dgram from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { answerWindows, measureWindow, nextMessage, type WindowStats } from './child-window.js';
import { MediaClock } from '../../src/media/index.js';
import { NativeRtpIo, nativeRtpIoAddon } from '../../src/telephony/rtp/native-io.js';
import { createMediaSocket } from '../../src/telephony/rtp/port-allocator.js';
import type { MediaSocket } from '../../src/telephony/rtp/socket-protocol.js';
import { numberArg, median } from '../bench-args.js';

type Mode = 'dgram' | 'native' | 'native-connected';

async function child(mode: Mode, sockets: number, echo: boolean): Promise<void> {
  const send = (m: unknown) => process.send?.(m);
  let packets = 0;
  let touched = 0;
  let socks: MediaSocket[];
  let stop: () => void;
  if (mode === 'dgram') {
    socks = await Promise.all(
      Array.from({ length: sockets }, async () => {
        const s = createMediaSocket();
        await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
        return s;
      }),
    );
    const tick = setInterval(() => {}, 20); // the media clock runs either way
    stop = () => clearInterval(tick);
  } else {
    const clock = new MediaClock();
    const io = new NativeRtpIo(nativeRtpIoAddon(), clock);
    socks = Array.from({ length: sockets }, () => {
      const s = io.bind('127.0.0.1', 0);
      if (!s) throw new Error('no port');
      return s;
    });
    stop = () => clock.stop();
  }
  for (const s of socks) {
    let connected = false;
    s.on('message', (msg, from) => {
      packets++;
      touched += msg[0] ?? 0;
      if (mode === 'native-connected' && !connected) connected = s.connectTo?.({ address: from.address, port: from.port }) === true;
      if (echo) s.send(msg, from.port, from.address);
    });
  }
  const ports = socks.map((s) => s.address().port);
  const closeAll = stop;
  stop = () => {
    closeAll();
    for (const s of socks) s.close();
  };
  answerWindows(
    send,
    () => packets,
    () => {
      stop();
      return touched >= 0 ? 0 : 1;
    },
  );
  send({ ports });
}

async function measure(mode: Mode, sockets: number, seconds: number, echo: boolean): Promise<WindowStats> {
  const c = fork(fileURLToPath(import.meta.url), ['--child', mode, String(sockets), echo ? '1' : '0'], { execArgv: process.execArgv });
  const { ports } = await nextMessage<{ ports: number[] }>(c);
  const tx = dgram.createSocket('udp4');
  await new Promise<void>((r) => tx.bind(0, '127.0.0.1', () => r()));
  const packet = Buffer.alloc(172, 0x55);
  const sender = setInterval(() => {
    for (const p of ports) tx.send(packet, p, '127.0.0.1');
  }, 20);
  const stats = await measureWindow<WindowStats>(c, seconds); // the first second a warm-up
  clearInterval(sender);
  tx.close();
  c.send('stop');
  await new Promise((r) => c.once('exit', r));
  return stats;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] as Mode, Number(process.argv[4]), process.argv[5] === '1');
} else {
  const sockets = numberArg('sockets', 400);
  const seconds = numberArg('seconds', 10);
  const rounds = numberArg('rounds', 2);
  const echo = numberArg('echo', 0) === 1;
  nativeRtpIoAddon(); // built before the first round, not inside a measured child
  const modes = (process.argv[process.argv.indexOf('--modes') + 1] ?? '').includes(',')
    ? (process.argv[process.argv.indexOf('--modes') + 1]!.split(',') as Mode[])
    : (['dgram', 'native'] as Mode[]);
  const results = Object.fromEntries(modes.map((m) => [m, [] as number[]])) as Record<Mode, number[]>;
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
      const s = await measure(mode, sockets, seconds, echo);
      const us = s.cpuUs / Math.max(1, s.count);
      results[mode].push(us);
      console.log(
        `round ${r + 1} ${mode.padEnd(16)}: ${s.count} packets to ${sockets} sockets, ${us.toFixed(2)} µs CPU per packet ${echo ? 'received and sent back' : 'received'} (${Math.round((s.systemUs / Math.max(1, s.cpuUs)) * 100)} % kernel), receiver ${((s.cpuUs / (seconds * 1e6)) * 100).toFixed(1)} % of a core`,
      );
    }
  }
  console.log(
    `median µs of CPU per packet ${echo ? 'received and sent back' : 'received'}: ${modes.map((m) => `${m} ${median(results[m]).toFixed(2)}`).join(', ')}`,
  );
}
