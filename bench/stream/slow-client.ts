// How late audio.output reaches a streaming client that stops reading for a while and then reads again.
//   npx tsx bench/stream/slow-client.ts [--stall-seconds 10] [--rounds 2]
// The client (test/helpers/slow-ws-client.py: a real peer whose receive buffer is 4 KB, as a phone app's on a
// slow link would fill) sends the customer's voice in an assistive session, whose bridged audio.output comes
// back. It reads nothing for the stall, then reads everything. A frame's lateness is its arrival against the
// first frame's, less its place in the output timeline (timestamp_ms). Prints, per round: frames the client got
// more than 200 ms late, the latest one's lateness, the timeline gap left by dropped frames, and the
// gateway's count of dropped frames. Prints figures; asserts nothing.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startStreamGateway } from '../../test/helpers/stream.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const stallSeconds = arg('stall-seconds', 10);
const rounds = arg('rounds', 2);
const SLOW_CLIENT = fileURLToPath(new URL('../../test/helpers/slow-ws-client.py', import.meta.url));
const LATE_MS = 200;

const t = await startStreamGateway({ engines: 'none' });
try {
  for (let round = 1; round <= rounds; round++) {
    const { id, token } = await t.createSession({ mode: 'assistive_translation', source_language: 'en', target_language: 'es' });
    const url = new URL(t.wsUrl(id, token));
    const client = spawn('python3', [SLOW_CLIENT, url.hostname, url.port, `${url.pathname}${url.search}`], { stdio: ['pipe', 'pipe', 'inherit'] });
    const frames: Array<{ at: number; ts: number }> = [];
    let connected = (): void => undefined;
    const ready = new Promise<void>((resolve) => (connected = resolve));
    createInterface({ input: client.stdout }).on('line', (line) => {
      const m = JSON.parse(line) as { type: string; timestamp_ms: number };
      if (m.type === 'client.connected') connected();
      if (m.type === 'audio.output') frames.push({ at: performance.now(), ts: m.timestamp_ms });
    });
    await ready;
    const droppedBefore = t.stream.outputDropped;
    client.stdin.write('read\n'); // a second of normal reading, then the stall
    await new Promise((r) => setTimeout(r, 1000));
    client.stdin.write('pause\n'); // it goes on sending the customer's voice
    await new Promise((r) => setTimeout(r, stallSeconds * 1000));
    client.stdin.write('read\n');
    await new Promise((r) => setTimeout(r, 3000 + stallSeconds * 200)); // time to drain what any buffer held
    client.stdin.end('quit\n');
    await new Promise((resolve) => client.once('exit', resolve));

    const first = frames[0];
    if (!first) throw new Error('no audio.output arrived');
    const lateness = frames.map((f) => f.at - first.at - (f.ts - first.ts));
    const late = lateness.filter((l) => l > LATE_MS);
    const gaps = frames.slice(1).map((f, i) => f.ts - frames[i]!.ts - 20);
    console.log(
      `round ${round}: stall ${stallSeconds} s; ${frames.length} frames received, ${late.length} of them more than ${LATE_MS} ms late, ` +
        `the latest ${Math.round(Math.max(0, ...lateness))} ms; largest gap in timestamp_ms ${Math.max(0, ...gaps)} ms; ` +
        `gateway dropped ${t.stream.outputDropped - droppedBefore} frames`,
    );
  }
} finally {
  await t.stop();
}
process.exit(0);
