// How late audio.output reaches a streaming client that stops reading for a while and then reads again.
//   npx tsx bench/stream/slow-client.ts [--stall-seconds 10] [--rounds 2]
// The client (test/helpers/slow-ws-client.py: a real peer whose receive buffer is 4 KB, as a phone app's on a
// slow link would fill) sends the customer's voice in an assistive session, whose bridged audio.output comes
// back. It reads nothing for the stall, then reads everything. A frame's lateness is its arrival against the
// first frame's, less its place in the output timeline (timestamp_ms). Prints, per round: frames the client got
// more than 200 ms late, the latest one's lateness, the timeline gap left by dropped frames, and the
// gateway's count of dropped frames. Prints figures; asserts nothing.
import { startSlowClient } from '../../test/helpers/slow-ws-client.js';
import { startStreamGateway } from '../../test/helpers/stream.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const stallSeconds = arg('stall-seconds', 10);
const rounds = arg('rounds', 2);
const LATE_MS = 200;

const t = await startStreamGateway({ engines: 'none' });
try {
  for (let round = 1; round <= rounds; round++) {
    const { id, token } = await t.createSession({ mode: 'assistive_translation', source_language: 'en', target_language: 'es' });
    const client = startSlowClient(t.wsUrl(id, token));
    const frames = client.frames;
    await client.connected;
    const droppedBefore = t.stream.outputDropped;
    client.command('read'); // a second of normal reading, then the stall
    await new Promise((r) => setTimeout(r, 1000));
    client.command('pause'); // it goes on sending the customer's voice
    await new Promise((r) => setTimeout(r, stallSeconds * 1000));
    client.command('read');
    await new Promise((r) => setTimeout(r, 3000 + stallSeconds * 200)); // time to drain what any buffer held
    await client.stop();

    const first = frames[0];
    if (!first) throw new Error('no audio.output arrived');
    const lateness = frames.map((f) => f.at - first.at - (f.timestamp_ms - first.timestamp_ms));
    const late = lateness.filter((l) => l > LATE_MS);
    const gaps = frames.slice(1).map((f, i) => f.timestamp_ms - frames[i]!.timestamp_ms - 20);
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
