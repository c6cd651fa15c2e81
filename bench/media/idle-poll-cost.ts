// What an idle socket costs the batched reader (MEDIA_IO=native) per tick: N bound sockets with
// nothing queued (as RTCP's on port + 1 are between reports) read by one drain call, through io_uring
// (one poll() finds none readable) and through recvmmsg per socket (io_uring unavailable, e.g. a
// container whose seccomp profile refuses it). Per call, wall and CPU time.
//   npx tsx bench/media/idle-poll-cost.ts [--sockets 800,1600] [--calls 2000]
// Prints figures; asserts nothing.
import { performance } from 'node:perf_hooks';
import { ipv4ToUint, nativeRtpIoAddon } from '../../src/telephony/rtp/native-io.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}
const counts = arg('sockets', '800,1600').split(',').map(Number);
const calls = Number(arg('calls', '2000'));
const addon = nativeRtpIoAddon();
const loopback = ipv4ToUint('127.0.0.1')!;
const SLOT = 2048;
const BATCH = 2048;
const out = new Uint8Array(SLOT * BATCH);
const meta = new Int32Array(4 * BATCH);
const arrivals = new Float64Array(BATCH);

for (const n of counts) {
  const fds = Int32Array.from({ length: n }, () => addon.open(loopback, 0));
  for (const ioUring of [true, false]) {
    if (ioUring && !addon.ioUringReady()) continue;
    for (let round = 1; round <= 3; round++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) addon.drain(fds, out, meta, arrivals, ioUring);
      const cpu = process.cpuUsage(cpu0);
      const wallUs = ((performance.now() - t0) * 1000) / calls;
      const cpuUs = (cpu.user + cpu.system) / calls;
      console.log(
        `${n} idle sockets, ${ioUring ? 'io_uring' : 'recvmmsg'} round ${round}: ${wallUs.toFixed(1)} µs wall, ${cpuUs.toFixed(1)} µs CPU per drain call (${((cpuUs * 1000) / n).toFixed(0)} ns per socket; ${((cpuUs * 50) / 10_000).toFixed(2)} % of a core at 50 ticks/s)`,
      );
    }
  }
  for (const fd of fds) addon.close(fd);
}
