// RTP sockets in a worker thread (MEDIA_WORKERS): packets both ways through a real worker and real
// UDP sockets, one message per batch, and a clear error once the worker is gone.
import { afterEach, describe, expect, it } from 'vitest';
import dgram from 'node:dgram';
import { RtpSocketPool } from '../../../src/telephony/rtp/socket-pool.js';
import type { MediaSocket } from '../../../src/telephony/rtp/socket-protocol.js';
import { defined } from '../../helpers/defined.js';

const pools: RtpSocketPool[] = [];
const plain: dgram.Socket[] = [];
afterEach(async () => {
  plain.splice(0).forEach((s) => s.close());
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

async function udp(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  plain.push(s);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

async function pooled(pool: RtpSocketPool): Promise<MediaSocket> {
  // Port 0: the kernel picks (the allocator's even-port choice is tested with the endpoint).
  const s = await pool.bind('127.0.0.1', 0);
  if (!s) throw new Error('bind failed');
  return s;
}

function collect(n: number, on: (fn: (msg: Buffer, port: number) => void) => void): Promise<{ msg: Buffer; port: number }[]> {
  return new Promise((resolve) => {
    const got: { msg: Buffer; port: number }[] = [];
    on((msg, port) => {
      got.push({ msg: Buffer.from(msg), port });
      if (got.length === n) resolve(got);
    });
  });
}

describe('RtpSocketPool', () => {
  it("sends every socket's packets of one turn in one batch, each from its own port", async () => {
    const pool = new RtpSocketPool(1);
    pools.push(pool);
    const socks = [await pooled(pool), await pooled(pool), await pooled(pool)];
    const sink = await udp();
    const arrived = collect(3, (fn) => sink.on('message', (m, r) => fn(m, r.port)));
    const before = pool.counts.txBatches;
    socks.forEach((s, i) => s.send(Buffer.from([i, 1, 2, 3]), sink.address().port, '127.0.0.1'));
    const got = await arrived;
    expect(pool.counts.txBatches - before).toBe(1);
    expect(got.map((g) => g.msg[0]).sort()).toEqual([0, 1, 2]);
    for (const g of got) expect(g.port).toBe(defined(socks[defined(g.msg[0], 'socket index')], 'socket').address().port);
  });

  it('delivers received packets with their source, in order, to the right socket', async () => {
    const pool = new RtpSocketPool(1);
    pools.push(pool);
    const a = await pooled(pool);
    const b = await pooled(pool);
    const src = await udp();
    const atA = collect(5, (fn) => a.on('message', (m, r) => fn(m, r.port)));
    let atB = 0;
    b.on('message', () => atB++);
    for (let i = 0; i < 5; i++) src.send(Buffer.from([i]), a.address().port, '127.0.0.1');
    const got = await atA;
    expect(got.map((g) => g.msg[0])).toEqual([0, 1, 2, 3, 4]);
    expect(got.every((g) => g.port === src.address().port)).toBe(true);
    expect(atB).toBe(0);
  });

  it('answers a bind with a clear error once its worker has ended', async () => {
    const pool = new RtpSocketPool(1);
    await pool.close();
    await expect(pool.bind('127.0.0.1', 0)).rejects.toThrow(/RTP socket worker exited/);
  });

  it('refuses a pool size that is not a positive integer', () => {
    expect(() => new RtpSocketPool(0)).toThrow(/positive integer/);
  });
});
