// The SIP UDP transport hands framed datagrams to its ingress queue (sip.udpIngressBudgetMs,
// sip.udpIngressQueueMax): a burst larger than the queue is cut, the rest handled in order.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIP_LIMITS } from '../../../src/telephony/sip/framing.js';
import { makeUdpTransport, type FrontSink, type Transport } from '../../../src/telephony/sip/transports.js';
import { freePort } from '../../helpers/sip-harness.js';

const open: Transport[] = [];
const senders: dgram.Socket[] = [];
afterEach(() => {
  open.splice(0).forEach((t) => t.destroy());
  senders.splice(0).forEach((s) => s.close());
});

const options = (cseq: number, port: number) =>
  [
    `OPTIONS sip:probe@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bK-burst-${cseq}`,
    'Max-Forwards: 70',
    'From: <sip:burst@127.0.0.1>;tag=b1',
    `To: <sip:probe@127.0.0.1:${port}>`,
    'Call-ID: ingress-burst',
    `CSeq: ${cseq} OPTIONS`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');

describe('SIP UDP ingress', () => {
  it('drops what does not fit the queue from a burst read at once, and handles the rest in order', async () => {
    const port = await freePort();
    const handled: number[] = [];
    const refused: string[] = [];
    const sink: FrontSink = {
      message: (m) => handled.push(Number(m.headers.cseq.seq)),
      refused: (fault) => refused.push(fault),
      warn: () => {},
    };
    const transport = makeUdpTransport('127.0.0.1', port, DEFAULT_SIP_LIMITS, sink, undefined, { budgetMs: 3, maxQueued: 4 });
    open.push(transport);
    const sender = dgram.createSocket('udp4');
    senders.push(sender);
    await new Promise<void>((resolve) => sender.bind(0, '127.0.0.1', resolve));
    // All 20 leave in this turn, so the transport finds them waiting together at its next read.
    const sent = Array.from({ length: 20 }, (_, i) => new Promise<void>((resolve) => sender.send(options(i + 1, port), port, '127.0.0.1', () => resolve())));
    await Promise.all(sent);
    await expect.poll(() => handled.length + refused.length, { timeout: 10_000 }).toBe(20);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused)).toEqual(new Set(['ingress_queue_full']));
    expect(handled).toEqual([...handled].sort((a, b) => a - b));
  });
});
