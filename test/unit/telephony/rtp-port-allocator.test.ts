// RTP ports: the range is walked, so a port a call just closed is not handed to the next call while
// others are free (a peer that missed the BYE keeps sending there, and its packets would reach or latch
// the next call), and is still handed out when nothing else is free.
import { describe, it, expect, afterEach } from 'vitest';
import dgram from 'node:dgram';
import { bindRtpSocket, type PortRange } from '../../../src/telephony/rtp/port-allocator.js';

const open: dgram.Socket[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(close));
});

const close = (s: dgram.Socket) => new Promise<void>((r) => s.close(() => r()));

async function isFree(port: number): Promise<boolean> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.bind({ port, address: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** `slots` even ports that nothing else holds now (below the ephemeral range). */
async function freeRange(slots: number): Promise<PortRange> {
  for (;;) {
    const portMin = 20000 + 2 * Math.floor(Math.random() * 5000);
    const portMax = portMin + 2 * (slots - 1);
    let free = true;
    for (let p = portMin; p <= portMax && free; p += 2) free = await isFree(p);
    if (free) return { portMin, portMax };
  }
}

async function bind(range: PortRange): Promise<dgram.Socket> {
  const s = await bindRtpSocket(range, '127.0.0.1');
  open.push(s);
  return s;
}

async function bindAndClose(range: PortRange): Promise<number> {
  const s = await bind(range);
  const port = s.address().port;
  open.splice(open.indexOf(s), 1);
  await close(s);
  return port;
}

describe('RTP port allocation', () => {
  it('does not hand out a just-closed port while the range has others', async () => {
    const range = await freeRange(8);
    const closed: number[] = [];
    for (let i = 0; i < 8; i++) {
      const port = await bindAndClose(range);
      expect(closed).not.toContain(port);
      expect(port % 2).toBe(0);
      expect(port).toBeGreaterThanOrEqual(range.portMin);
      expect(port).toBeLessThanOrEqual(range.portMax);
      closed.push(port);
    }
  });

  it('reuses a just-closed port when nothing else is free, and says so when nothing is free at all', async () => {
    const range = await freeRange(1);
    const port = await bindAndClose(range);
    const again = await bind(range);
    expect(again.address().port).toBe(port);
    await expect(bindRtpSocket(range, '127.0.0.1')).rejects.toThrow(/no free RTP port/);
  });
});
