// Admission by the media clock on the streaming socket: while the process's media clock runs late, a
// session that would go live on this node is closed 1013 `media_overloaded` (as a new call gets 503),
// a session already live here (its reconnect grace) is let back in, and once the clock keeps time
// again new sessions are taken. A stream-only node (SIP off): the guard belongs to the node, not to SIP.
// The same by the event loop's headroom alone: a loop busy most of each frame, its clock still on time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { holdTheMediaClock } from '../helpers/hold-media-clock.js';
import { eventually } from '../helpers/sip-harness.js';

let t: StreamTestGateway;
beforeAll(async () => {
  t = await startStreamGateway({ overrides: { sip: { enabled: false, overloadLatePercent: 5 } } });
});
afterAll(async () => t?.stop());

async function metrics(gateway: StreamTestGateway = t): Promise<string> {
  return (await fetch(`${gateway.gw.httpUrl}/metrics`)).text();
}

const FRAME = Buffer.alloc(160, 0xff).toString('base64');

describe('stream admission by the media clock', () => {
  it('closes 1013 media_overloaded for a new session while the clock runs late, lets a live one reconnect, and takes new ones after', async () => {
    const live = await t.createSession();
    const first = await t.connect(live.id, live.token);
    await first.waitForType('session.ready');
    first.send({ type: 'audio.input', speaker: 'customer', audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: FRAME } });

    const fresh = await t.createSession();
    const release = holdTheMediaClock();
    try {
      await eventually(async () => /voxbridge_media_overload\{stat="overloaded"\} 1/.test(await metrics()), 20_000);
      const refused = await t.connect(fresh.id, fresh.token);
      expect(await refused.closed).toEqual({ code: 1013, reason: 'media_overloaded' });
      expect(refused.messages).toEqual([]);
      // The live session's client drops and comes back within its grace: existing load, let in.
      await first.close();
      const again = await t.connect(live.id, await t.issueToken(live.id));
      await again.waitForType('session.ready');
      await again.close();
      const text = await metrics();
      expect(text).toMatch(/voxbridge_stream_refused_overloaded 1\n/);
      expect(text).toMatch(/voxbridge_media_overload\{stat="enabled"\} 1/);
    } finally {
      release();
    }
    // Three seconds in a row on time (or an idle clock) clear it; the refused session is still active.
    await eventually(async () => /voxbridge_media_overload\{stat="overloaded"\} 0/.test(await metrics()), 20_000);
    const taken = await t.connect(fresh.id, fresh.token);
    expect(await taken.waitForType('session.ready')).toMatchObject({ session_id: fresh.id });
    await taken.close();
    expect(await metrics()).toMatch(/voxbridge_media_overload\{stat="overloads"\} 1/);
  }, 90_000);
});

describe('stream admission by the event loop', () => {
  let busy: StreamTestGateway;
  beforeAll(async () => {
    // Lateness not watched: only the loop's utilization can turn streams away here.
    busy = await startStreamGateway({ overrides: { sip: { enabled: false, overloadLatePercent: 0, overloadLoopPercent: 50 } } });
  });
  afterAll(async () => busy?.stop());

  it('closes 1013 media_overloaded while the loop is busy over its limit, and takes the session once it has room', async () => {
    const fresh = await busy.createSession();
    const release = holdTheMediaClock({ holdMs: 14, everyFrames: 1 });
    try {
      await eventually(async () => /voxbridge_media_overload\{stat="overloaded"\} 1/.test(await metrics(busy)), 20_000);
      const refused = await busy.connect(fresh.id, fresh.token);
      expect(await refused.closed).toEqual({ code: 1013, reason: 'media_overloaded' });
      const busyPercent = Number(/voxbridge_media_overload\{stat="loop_busy_percent"\} ([\d.]+)/.exec(await metrics(busy))?.[1]);
      expect(busyPercent).toBeGreaterThan(50);
    } finally {
      release();
    }
    await eventually(async () => /voxbridge_media_overload\{stat="overloaded"\} 0/.test(await metrics(busy)), 20_000);
    const taken = await busy.connect(fresh.id, fresh.token);
    expect(await taken.waitForType('session.ready')).toMatchObject({ session_id: fresh.id });
    await taken.close();
  }, 90_000);
});
