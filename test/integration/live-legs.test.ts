// The live legs' per-session lookup (telephony/live-legs.ts): every call read of the API and the node
// heartbeat (once per live session and period) ask it, so it is an index, not a scan of every leg.
// Checked here: each session gets its own legs, an ended leg leaves its session's list, and a caller
// walking a session's list while its legs end (endSession closing each) still reaches every leg.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { SafeEmitter } from '../../src/events/index.js';
import { MediaClock } from '../../src/media/index.js';
import type { SipLeg, SipLegEvents } from '../../src/telephony/call-leg.js';
import { CallStats } from '../../src/telephony/call-stats.js';
import { LiveLegs } from '../../src/telephony/live-legs.js';
import { FakeSessions, startTelephonyFixture, type TelephonyFixture } from '../helpers/sip-harness.js';
import { uniqueName } from '../helpers/gateway.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
}, 60_000);
afterAll(async () => {
  await fx?.stop();
});

/** The part of a SipLeg that LiveLegs reads; close() ends it at once, as a BYE sent does. */
class StandInLeg extends SafeEmitter<SipLegEvents> {
  readonly party = 'customer';
  readonly direction = 'inbound';
  readonly provider = 'sip';
  readonly from = 'sip:caller@127.0.0.1';
  readonly to = 'sip:callee@127.0.0.1';
  readonly callSid = uniqueName('sid');
  readonly callQuality = { mos: null, loss_percent: null, jitter_ms: null, rtt_ms: null };
  readonly finalStats = null;
  isEnded = false;
  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly orgId: string,
  ) {
    super();
  }
  onAudio(): void {}
  close(reason: string): void {
    if (this.isEnded) return;
    this.isEnded = true;
    this.emit('ended', { reason, durationSeconds: 1 });
  }
}

function liveLegs(): LiveLegs {
  return new LiveLegs({ db: fx.db, log: pino({ level: 'silent' }), sessions: new FakeSessions(), stats: new CallStats(new MediaClock()) });
}

async function bridged(legs: LiveLegs, sessionId: string, n: number): Promise<StandInLeg[]> {
  const made = Array.from({ length: n }, () => new StandInLeg(uniqueName('call'), sessionId, fx.orgId));
  await Promise.all(made.map((leg) => legs.bridge(leg as unknown as SipLeg)));
  return made;
}

describe('live legs by session', () => {
  it('lists each session its own legs, drops ended ones, and lets a caller close every leg it walks', async () => {
    const legs = liveLegs();
    const a = await bridged(legs, uniqueName('sess'), 3);
    const b = await bridged(legs, uniqueName('sess'), 2);
    const sessionA = a[0]!.sessionId;
    const sessionB = b[0]!.sessionId;

    expect(legs.ofSession(sessionA)).toEqual(a);
    expect(legs.ofSession(sessionB)).toEqual(b);
    expect(legs.ofSession('sess_unknown')).toEqual([]);
    expect(legs.size).toBe(5);

    a[1]!.close('remote_hangup');
    expect(legs.ofSession(sessionA)).toEqual([a[0], a[2]]);
    expect(legs.ofSession(sessionB)).toEqual(b);

    // As the session's end does: each close ends the leg (and changes the index) during the walk.
    for (const leg of legs.ofSession(sessionB)) leg.close('session_ended');
    expect(b.every((leg) => leg.isEnded)).toBe(true);
    expect(legs.ofSession(sessionB)).toEqual([]);
    expect(legs.ofSession(sessionA)).toEqual([a[0], a[2]]);
    expect(legs.size).toBe(2);
    await legs.flush();
  });
});
