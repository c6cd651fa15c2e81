// Flood and scanner defences against the real SIP front, with loopback taken off the allow-list so
// the test's own traffic is the attacker: 503 + Retry-After over the rate, then a ban (no answers),
// scanners dropped, digest guessing locked out; counters on /metrics.
import dgram from 'node:dgram';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startTelephonyFixture, eventually, runSipp, type TelephonyFixture } from '../helpers/sip-harness.js';
import { parseRawResponse, rawMessage, udpExchange, type RawResponse } from '../helpers/sip-raw.js';
import { registerTelephonyMetrics, type Telephony } from '../../src/telephony/index.js';
import { defined } from '../helpers/defined.js';

let fx: TelephonyFixture | undefined;
afterEach(async () => {
  await fx?.stop();
  fx = undefined;
});

const guard = (over: Record<string, unknown> = {}) => ({
  guard: {
    allowCidrs: [],
    requestsPerSecond: 5,
    burst: 10,
    strikesBeforeBan: 10,
    strikeWindowSeconds: 60,
    banSeconds: 600,
    authFailuresBeforeLockout: 3,
    ...over,
  },
});

const options = (callId: string, port: number, userAgent?: string) =>
  rawMessage(
    [
      'OPTIONS sip:probe@127.0.0.1 SIP/2.0',
      `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${callId}`,
      'From: <sip:probe@127.0.0.1>;tag=g1',
      'To: <sip:probe@127.0.0.1>',
      `Call-ID: ${callId}`,
      'CSeq: 1 OPTIONS',
      'Max-Forwards: 70',
      ...(userAgent ? [`User-Agent: ${userAgent}`] : []),
      'Content-Length: 0',
    ],
    {},
  );

describe('SIP flood and scanner defences', () => {
  it('answers 503 with Retry-After over the rate, then bans the source and stops answering', async () => {
    fx = await startTelephonyFixture({ sip: guard() });
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    const answers: RawResponse[] = [];
    s.on('message', (b) => answers.push(parseRawResponse(b.toString('latin1'))));
    const port = s.address().port;
    for (let i = 0; i < 60; i++) s.send(Buffer.from(options(`flood-${i}-${Date.now()}`, port)), fx.sipPort, '127.0.0.1');
    await eventually(() => (fx!.svc.refusals.counts.bans ?? 0) >= 1);
    await eventually(() => (fx!.svc.refusals.counts.banned ?? 0) > 0);
    // Answers travel back asynchronously: wait for the burst's 200s and the first 503.
    await eventually(() => answers.filter((a) => a.status === 200).length >= 10 && answers.some((a) => a.status === 503));
    const ok = answers.filter((a) => a.status === 200).length;
    const limited = answers.filter((a) => a.status === 503);
    expect(ok).toBeGreaterThanOrEqual(10); // the burst
    expect(ok).toBeLessThan(60);
    expect(limited.length).toBeGreaterThan(0);
    expect(Number(defined(limited[0], 'rate-limited answer').header('retry-after'))).toBeGreaterThanOrEqual(1);
    s.close();
    // Banned: a well-formed request gets no answer at all.
    expect(await udpExchange(fx.sipPort, options(`after-ban-${Date.now()}`, 9), 1500)).toBeNull();
    const registry = new Registry();
    registerTelephonyMetrics(registry, {
      refusedCounts: () => ({ ...fx!.svc.refusals.counts }),
      activeCalls: 0,
      callCounts: () => ({}),
      requestCounts: () => ({ ...fx!.svc.ua.requestCounts }),
      mediaStats: () => ({}),
    } as unknown as Telephony);
    const text = await registry.metrics();
    expect(text).toMatch(/voxbridge_sip_refused\{fault="rate_limited"\} [1-9]/);
    expect(text).toMatch(/voxbridge_sip_refused\{fault="bans"\} 1/);
    expect(text).toMatch(/voxbridge_sip_requests\{method="OPTIONS"\} [1-9]/);
  }, 60_000);

  it('drops known scanners without an answer', async () => {
    fx = await startTelephonyFixture({ sip: guard() });
    expect(await udpExchange(fx.sipPort, options(`scan-${Date.now()}`, 9, 'friendly-scanner'), 1500)).toBeNull();
    expect(fx.svc.refusals.counts.scanner).toBe(1);
  }, 60_000);

  it('locks out a username after repeated digest failures, even with the right password afterwards', async () => {
    fx = await startTelephonyFixture({ sip: guard({ requestsPerSecond: 1000, burst: 1000, strikesBeforeBan: 1000 }) });
    const target = `127.0.0.1:${fx.sipPort}`;
    for (let i = 0; i < 3; i++) {
      const r = await runSipp({ scenario: 'uac-auth-refused.xml', target, service: fx.pbxNumber, extra: ['-au', 'pbx', '-ap', `guess${i}`] });
      expect(r.code, r.errors).toBe(0);
    }
    // The right password is refused too while the username is locked.
    const r = await runSipp({ scenario: 'uac-auth-refused.xml', target, service: fx.pbxNumber, extra: ['-au', 'pbx', '-ap', 'pbxpass'] });
    expect(r.code, r.errors).toBe(0);
    expect(fx.svc.guard.isUserLocked('pbx')).toBe(true);
  }, 90_000);

  it('gives an untrusted source the same answer for an unknown number as for one it may not call', async () => {
    fx = await startTelephonyFixture({ sip: guard({ requestsPerSecond: 1000, burst: 1000, strikesBeforeBan: 1000 }) });
    const sdp = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40004 RTP/AVP 0\r\n';
    const invite = (number: string) =>
      rawMessage(
        [
          `INVITE sip:${number}@127.0.0.1 SIP/2.0`,
          `Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKenum${number}`,
          'From: <sip:scan@127.0.0.1>;tag=e1',
          `To: <sip:${number}@127.0.0.1>`,
          `Call-ID: enum-${number}-${Date.now()}`,
          'CSeq: 1 INVITE',
          'Max-Forwards: 70',
          'Contact: <sip:scan@127.0.0.1:9>',
          'Content-Type: application/sdp',
          `Content-Length: ${sdp.length}`,
        ],
        {},
        sdp,
      );
    const unknown = await udpExchange(fx.sipPort, invite('+19995550000'));
    const closed = await udpExchange(fx.sipPort, invite(fx.closedNumber));
    expect(unknown?.status).toBe(401);
    expect([closed?.status, closed?.reason]).toEqual([unknown?.status, unknown?.reason]);
  }, 60_000);
});
