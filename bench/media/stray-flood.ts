// What a flood of stray RTP costs the gateway, with the legs' sockets connected to their settled source
// (MEDIA_IO_CONNECT, the default) and without: a child process runs N RTP endpoints as the gateway does
// (MEDIA_IO=native); this process plays every leg's caller (a 20 ms packet per leg from the SDP's source,
// so the latch settles) and one stray source that sends `--flood` packets a second spread over the legs'
// ports (an RTP port scan, or a hijack attempt). Prints the child's CPU and what its legs counted, both
// settings alternated.
//   npx tsx bench/media/stray-flood.ts [--legs 200] [--flood 20000] [--seconds 10] [--rounds 2]
// Prints figures; asserts nothing.
import { fork } from 'node:child_process';
import dgram from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { measureWindow, nextMessage } from './child-window.js';
import { RtpEndpoint } from '../../src/telephony/rtp/endpoint.js';
import { nativeRtpIoAddon } from '../../src/telephony/rtp/native-io.js';
import { serializeRtp } from '../../src/telephony/rtp/packet.js';
import { numberArg } from '../bench-args.js';

interface Counts {
  packetsIn: number;
  ignoredSource: number;
}
interface Stats extends Counts {
  cpuUs: number;
  systemUs: number;
}

async function child(legs: number, connect: boolean, callerPorts: number[]): Promise<void> {
  const send = (m: unknown) => process.send?.(m);
  const endpoints = await Promise.all(
    callerPorts.map(async (port) => {
      const ep = await RtpEndpoint.open({
        bindAddress: '127.0.0.1',
        portMin: 40000,
        portMax: 49999,
        timeoutMs: 60_000,
        nativeIo: true,
        connectSettled: connect,
      });
      ep.configure({ address: '127.0.0.1', port, payloadType: 0, dtmfPayloadType: null, send: true, expectReceive: true });
      ep.onFrames(() => {});
      return ep;
    }),
  );
  const counts = (): Counts =>
    endpoints.reduce((c, ep) => ({ packetsIn: c.packetsIn + ep.stats.packetsIn, ignoredSource: c.ignoredSource + ep.stats.ignoredSource }), {
      packetsIn: 0,
      ignoredSource: 0,
    });
  let mark = { counts: counts(), cpu: process.cpuUsage() };
  process.on('message', (m: string) => {
    if (m === 'mark') {
      mark = { counts: counts(), cpu: process.cpuUsage() };
      send('marked');
    } else if (m === 'stats') {
      const cpu = process.cpuUsage(mark.cpu);
      const now = counts();
      send({
        packetsIn: now.packetsIn - mark.counts.packetsIn,
        ignoredSource: now.ignoredSource - mark.counts.ignoredSource,
        cpuUs: cpu.user + cpu.system,
        systemUs: cpu.system,
      } satisfies Stats);
    } else if (m === 'stop') {
      for (const ep of endpoints) ep.close();
      setTimeout(() => process.exit(0), 200);
    }
  });
  send({ ports: endpoints.map((ep) => ep.port), legs });
}

async function bound(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

async function measure(legs: number, connect: boolean, flood: number, seconds: number): Promise<Stats> {
  const callers = await Promise.all(Array.from({ length: legs }, bound));
  const stray = await bound();
  const callerPorts = callers.map((c) => c.address().port);
  const c = fork(fileURLToPath(import.meta.url), ['--child', String(legs), connect ? '1' : '0', callerPorts.join(',')], { execArgv: process.execArgv });
  const { ports } = await nextMessage<{ ports: number[] }>(c);
  const payload = Buffer.alloc(160, 0xff);
  let seq = 0;
  let strayAt = 0;
  const perTick = Math.round((flood * 20) / 1000);
  const sender = setInterval(() => {
    const packet = serializeRtp({ marker: seq === 0, payloadType: 0, sequence: seq & 0xffff, timestamp: (seq * 160) >>> 0, ssrc: 7, payload });
    seq++;
    callers.forEach((caller, i) => caller.send(packet, ports[i] ?? 0, '127.0.0.1'));
    for (let k = 0; k < perTick; k++) stray.send(packet, ports[strayAt++ % ports.length] ?? 0, '127.0.0.1');
  }, 20);
  const stats = await measureWindow<Stats>(c, seconds); // the first second a warm-up: the latches settle
  clearInterval(sender);
  c.send('stop');
  await new Promise((r) => c.once('exit', r));
  for (const s of [...callers, stray]) s.close();
  return stats;
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]), process.argv[4] === '1', (process.argv[5] ?? '').split(',').map(Number));
} else {
  const legs = numberArg('legs', 200);
  const flood = numberArg('flood', 20_000);
  const seconds = numberArg('seconds', 10);
  const rounds = numberArg('rounds', 2);
  nativeRtpIoAddon(); // built before the first round, not inside a measured child
  for (let r = 0; r < rounds; r++) {
    for (const connect of r % 2 === 0 ? [false, true] : [true, false]) {
      const s = await measure(legs, connect, flood, seconds);
      console.log(
        `round ${r + 1} ${connect ? 'connected    ' : 'not connected'}: ${legs} legs, ${flood} stray packets/s: gateway ${((s.cpuUs / (seconds * 1e6)) * 100).toFixed(1)} % of a core (${Math.round((s.systemUs / Math.max(1, s.cpuUs)) * 100)} % kernel); legs took ${s.packetsIn} packets, counted ${s.ignoredSource} strays`,
      );
    }
  }
}
