// A client that falls behind must not make the gateway queue audio.output without bound (issue 12: live
// queues converge to a small depth, never grow). Without a bound, the kernel's send buffer takes hundreds
// of kilobytes (tens of seconds of 20 ms frames) before Node sees any backpressure; with TCP_NOTSENT_LOWAT
// (src/stream/tcp-send-queue.ts) it holds a few frames, Node's buffer at most MAX_QUEUED_OUTPUT_BYTES,
// and the rest is dropped and counted. The client is a real peer with a small receive buffer
// (test/helpers/slow-ws-client.py): a Node client cannot set one, and the kernel grows an unset one to
// megabytes while its reader sleeps.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { metricsRegistry } from '../../src/api/index.js';
import { UNSENT_LOWAT_BYTES } from '../../src/stream/tcp-send-queue.js';
import type { SessionOutput } from '../../src/sessions/index.js';
import { startSlowClient } from '../helpers/slow-ws-client.js';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';

let t: StreamTestGateway;

beforeAll(async () => {
  t = await startStreamGateway({ engines: 'none' });
});
afterAll(async () => {
  await t?.stop();
});

/** The kernel's unsent bytes (tcp_info notsent) on the gateway's side of its established connections. */
function gatewayUnsentBytes(port: number): number[] {
  const out = execFileSync('ss', ['-tniH', 'state', 'established', `( sport = :${port} )`]).toString();
  // ss prints each socket's address line, then its tcp_info line; notsent is absent when nothing waits.
  return out
    .split('\n')
    .filter((line) => /\brtt:/.test(line))
    .map((line) => Number(/\bnotsent:(\d+)/.exec(line)?.[1] ?? 0));
}

describe('audio.output to a client that falls behind', () => {
  it('is dropped and counted past a few frames, the kernel holding no more than its bound; once the client reads, current audio again', async () => {
    const { id, token } = await t.createSession({ mode: 'assistive_translation', source_language: 'en', target_language: 'es' });
    const url = new URL(t.wsUrl(id, token));
    const port = Number(url.port);
    const client = startSlowClient(url.href);
    const frames = client.frames;
    try {
      // The client sends the customer's voice (bridged to the agent: audio.output flows) and reads nothing.
      await vi.waitFor(() => expect(t.stream.outputDropped).toBeGreaterThan(20), { timeout: 30_000, interval: 50 });

      // Dropping, not queueing: the kernel keeps its bound while frames keep coming and being dropped.
      const droppedBefore = t.stream.outputDropped;
      await vi.waitFor(() => expect(t.stream.outputDropped).toBeGreaterThan(droppedBefore + 50), { timeout: 30_000, interval: 50 });
      const unsent = gatewayUnsentBytes(port);
      expect(unsent.length).toBeGreaterThan(0);
      // TCP_NOTSENT_LOWAT lets a write that starts under the mark go in whole: one message over it at most.
      for (const n of unsent) expect(n).toBeLessThanOrEqual(UNSENT_LOWAT_BYTES + 1024);

      const metrics = await metricsRegistry.metrics();
      expect(Number(/^voxbridge_stream_output_dropped_frames (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(droppedBefore + 50);
      expect(metrics).toMatch(/^voxbridge_media_stage_ms_count\{stage="socket_send"\} [1-9]/m);
      expect(metrics).toMatch(/^voxbridge_stream_connections 1$/m);
      // The session's pacer carried the bridged audio through its live queue; its figures are there.
      expect(metrics).toMatch(/^voxbridge_pacer_live_frames\{counter="underruns"\} \d+$/m);
      expect(metrics).toMatch(/^voxbridge_media_stage_ms_count\{stage="pacer"\} [1-9]/m);

      // Reading: what the buffers held arrives, then current audio. The dropped stretch is a gap in the
      // timeline (timestamp_ms), not audio delivered late, and sequence numbers stay consecutive.
      client.command('read');
      await vi.waitFor(() => expect(frames.length).toBeGreaterThanOrEqual(100), { timeout: 30_000, interval: 50 });
      const jumps = frames.slice(1).map((f, i) => f.timestamp_ms - frames[i]!.timestamp_ms);
      expect(Math.max(...jumps)).toBeGreaterThanOrEqual(50 * 20); // the 50 frames dropped above, at least, as one gap
      frames.slice(1).forEach((f, i) => expect(f.sequence).toBe(frames[i]!.sequence + 1));

      // Caught up: a client that reads loses nothing more.
      const droppedCaughtUp = t.stream.outputDropped;
      const seen = frames.length;
      await vi.waitFor(() => expect(frames.length).toBeGreaterThanOrEqual(seen + 50), { timeout: 20_000, interval: 50 });
      expect(t.stream.outputDropped).toBe(droppedCaughtUp);
    } finally {
      await client.stop();
    }
  }, 120_000);

  it('loses nothing for a client that keeps up when the media clock runs several ticks in one task (catching up after a stall)', async () => {
    const { id, token } = await t.createSession({ mode: 'assistive_translation', source_language: 'en', target_language: 'es' });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    const session = t.registry.get(id);
    if (!session) throw new Error('the session is not live on this node');
    const droppedBefore = t.stream.outputDropped;
    // What a clock that runs 15 ticks back to back releases: 15 frames before any write's callback.
    for (let i = 0; i < 15; i++) {
      const out: SessionOutput = { to: 'agent', speaker: 'customer_original', frame: new Int16Array(160).fill(1000), timestampMs: 20 * i };
      session.emit('output', out);
    }
    const frames = await s.waitForCount('audio.output', 15);
    expect(frames.map((f) => f.timestamp_ms)).toEqual(Array.from({ length: 15 }, (_, i) => 20 * i));
    expect(t.stream.outputDropped).toBe(droppedBefore);
    await s.close();
  });
});
