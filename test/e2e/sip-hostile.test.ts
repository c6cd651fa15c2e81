// Two crashes found in review and the TCP connection defences, against the real SIP front:
// hostile input is refused before the parser, counted, and the gateway keeps answering.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTelephonyFixture, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import { TcpPeer, optionsMessage as options, udpExchange } from '../helpers/sip-raw.js';

let fx: TelephonyFixture;
const refused = (fault: string): number => fx.svc.refusals.counts[fault] ?? 0;

/** The gateway still answers a well-formed OPTIONS over UDP. */
async function stillServing(tag: string): Promise<void> {
  const rs = await udpExchange(fx.sipPort, options(`alive-${tag}`, 'UDP', 9, ['Content-Length: 0']));
  expect(rs?.status).toBe(200);
}

beforeAll(async () => {
  fx = await startTelephonyFixture({
    sip: { stream: { tcpIdleTimeoutMs: 60_000, tcpMessageTimeoutMs: 1500, maxConnectionsPerSource: 4, maxConnections: 1000 } },
  });
}, 60_000);
afterAll(async () => fx?.stop());

describe('SIP front under hostile input', () => {
  it('answers TCP "Content-Length: abc" 400 and closes the connection instead of buffering a flood', async () => {
    const peer = await TcpPeer.connect(fx.sipPort);
    const before = process.memoryUsage().rss;
    peer.write(options('cl-abc', 'TCP', peer.localPort, ['Content-Length: abc']));
    const junk = Buffer.alloc(1 << 20, 0x41);
    let sentMb = 0;
    // Keep pushing (the reported crash needed ~520 MB) until the gateway closes the connection.
    while (!peer.closed && sentMb < 200) {
      if (!peer.write(junk)) await new Promise((r) => peer.socket.once('drain', r).once('close', r));
      sentMb++;
    }
    await peer.until(() => peer.closed, 15_000);
    const rs = peer.responses[0];
    expect([rs?.status, rs?.reason]).toEqual([400, 'Bad Content-Length']);
    expect(sentMb).toBeLessThan(200);
    expect(process.memoryUsage().rss - before).toBeLessThan(150 * 1024 * 1024);
    expect(refused('bad_content_length')).toBeGreaterThanOrEqual(1);
    await stillServing('cl');
  }, 60_000);

  it('refuses a 65,000-byte datagram of "\\r\\n " runs before parsing, without stalling the event loop', async () => {
    const h = monitorEventLoopDelay({ resolution: 10 });
    const s = dgram.createSocket('udp4');
    const before = refused('datagram_too_large');
    const hostile = Buffer.from('\r\n '.repeat(21_666), 'latin1');
    h.enable();
    // One at a time: five 65 KB datagrams at once can overflow the kernel's receive buffer.
    for (let i = 1; i <= 5; i++) {
      s.send(hostile, fx.sipPort, '127.0.0.1');
      await eventually(() => refused('datagram_too_large') >= before + i);
    }
    // Within the size cap the same pattern is scanned linearly too.
    const within = Buffer.from('\r\n '.repeat(5000), 'latin1');
    for (let i = 0; i < 5; i++) s.send(within, fx.sipPort, '127.0.0.1');
    await stillServing('udp');
    h.disable();
    s.close();
    // Before the framing layer each such datagram blocked the loop ~1.7 s; the bound is generous
    // for a busy shared machine.
    expect(h.max / 1e6).toBeLessThan(500);
  }, 60_000);

  it('logs what a refused datagram held: its size and first bytes, escaped', async () => {
    const details: (string | undefined)[] = [];
    const spy = vi.spyOn(fx.svc.refusals, 'record').mockImplementation((fault, _source, detail) => {
      if (fault === 'no_header_end') details.push(detail);
    });
    const s = dgram.createSocket('udp4');
    try {
      s.send(Buffer.from('OPTIONS sip:x SIP/2.0\r\nVia: \x00\x1b[31m', 'latin1'), fx.sipPort, '127.0.0.1');
      await eventually(() => details.length === 1);
    } finally {
      spy.mockRestore();
      s.close();
    }
    expect(details[0]).toBe('400 Missing Header Terminator; 34 bytes, starting "OPTIONS sip:x SIP/2.0\\r\\nVia: \\u0000\\u001b[31m"');
  });

  it('closes a TCP connection that streams "\\r\\n " runs with no end of headers', async () => {
    const peer = await TcpPeer.connect(fx.sipPort);
    const before = refused('header_too_large');
    const chunk = Buffer.from('X\r\n '.repeat(1000), 'latin1');
    for (let i = 0; i < 15 && !peer.closed; i++) peer.write(chunk);
    await peer.until(() => peer.closed, 15_000);
    expect(refused('header_too_large')).toBe(before + 1);
    await stillServing('tcp-headers');
  }, 60_000);

  it('closes a slow sender that never completes its message', async () => {
    const peer = await TcpPeer.connect(fx.sipPort);
    const before = refused('slow_sender');
    peer.write('OPTIONS sip:probe@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKslow\r\n');
    await peer.until(() => peer.closed, 15_000);
    expect(refused('slow_sender')).toBe(before + 1);
  }, 30_000);

  it('caps TCP connections per source address', async () => {
    const peers = await Promise.all([0, 1, 2, 3].map(() => TcpPeer.connect(fx.sipPort)));
    // Each of the four admitted connections is served.
    for (const p of peers) {
      p.write(options(`cap-${p.localPort}`, 'TCP', p.localPort, ['Content-Length: 0']));
      expect((await p.finalResponse()).status).toBe(200);
    }
    const fifth = await TcpPeer.connect(fx.sipPort);
    await fifth.until(() => fifth.closed, 10_000);
    expect(refused('connection_limit')).toBeGreaterThanOrEqual(1);
    peers.forEach((p) => p.close());
  }, 30_000);
});
