// audio.output written by the addon (src/stream/direct-send.ts) must reach a real WebSocket client as
// the same frames, in the same order, as if `ws` had written them, also when the kernel takes only part
// of a frame and when other messages go through `ws` in between.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { DirectTextSender, type DirectSendResult } from '../../../src/stream/direct-send.js';
import { makeTestPki } from '../../helpers/tls-certs.js';

interface Pair {
  server: WebSocket;
  socket: Socket;
  client: WebSocket;
  received: string[];
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function connectPair(): Promise<Pair> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket, IncomingMessage]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`, { perMessageDeflate: false });
  const received: string[] = [];
  client.on('message', (data, isBinary) => received.push(isBinary ? '<binary>' : data.toString()));
  const [[server, req]] = await Promise.all([accepted, once(client, 'open')]);
  cleanups.push(() => {
    client.terminate();
    server.terminate();
    wss.close();
  });
  return { server, socket: req.socket, client, received };
}

/** What the stream connection does: the addon first, `ws` when it refuses. */
function sendFrame(direct: DirectTextSender, ws: WebSocket, text: string): DirectSendResult {
  const result = direct.send(text, () => undefined);
  if (result === 'refused') ws.send(text);
  return result;
}

const message = (i: number, size: number) => JSON.stringify({ type: 'audio.output', sequence: i, pad: 'é→'.repeat(size / 5) + 'x'.repeat(size % 5) });

describe('audio.output written straight to the kernel', () => {
  it('arrives as the same text frames, in order, mixed with messages sent through ws', async () => {
    const p = await connectPair();
    const direct = DirectTextSender.for(p.socket);
    if (!direct) throw new Error('the tcp-send-queue addon did not load');
    const sent: string[] = [];
    const results: DirectSendResult[] = [];
    for (let i = 0; i < 60; i++) {
      const text = message(i, 300 + i * 37);
      results.push(sendFrame(direct, p.server, text));
      sent.push(text);
      if (i % 7 === 0) {
        const other = JSON.stringify({ type: 'transcript.partial', i }); // short: always through ws
        expect(direct.send(other, () => undefined)).toBe('refused');
        p.server.send(other);
        sent.push(other);
      }
    }
    expect(results.filter((r) => r === 'sent').length).toBeGreaterThan(0);
    await vi.waitFor(() => expect(p.received.length).toBe(sent.length), { timeout: 20_000, interval: 20 });
    expect(p.received).toEqual(sent);
  });

  it('keeps the frames whole and in order when the kernel takes only part of one', async () => {
    // A client that stops reading fills its receive window and then the gateway's send buffer; the first
    // frame that does not fit is taken in part (its rest queued in Node) or refused (sent through ws).
    const outcomes: DirectSendResult[] = [];
    for (let attempt = 0; attempt < 5 && !outcomes.includes('queued'); attempt++) {
      const p = await connectPair();
      const direct = DirectTextSender.for(p.socket);
      if (!direct) throw new Error('the tcp-send-queue addon did not load');
      p.client.pause();
      const sent: string[] = [];
      let result: DirectSendResult = 'sent';
      for (let i = 0; i < 2000 && result === 'sent'; i++) {
        const text = message(i, 20_000);
        result = sendFrame(direct, p.server, text);
        sent.push(text);
      }
      outcomes.push(result);
      expect(result).not.toBe('sent'); // the kernel's buffers are finite
      // Later frames wait behind the rest of the partial one, in Node's buffer.
      for (let i = 0; i < 3; i++) {
        const text = message(10_000 + i, 500);
        expect(direct.send(text, () => undefined)).toBe('refused');
        p.server.send(text);
        sent.push(text);
      }
      p.client.resume();
      await vi.waitFor(() => expect(p.received.length).toBe(sent.length), { timeout: 30_000, interval: 20 });
      expect(p.received).toEqual(sent);
    }
    expect(outcomes).toContain('queued');
  }, 120_000);

  it("does not overtake what waits in Node's buffer", async () => {
    const p = await connectPair();
    const direct = DirectTextSender.for(p.socket);
    if (!direct) throw new Error('the tcp-send-queue addon did not load');
    const first = message(1, 400);
    const second = message(2, 400);
    p.socket.cork(); // holds the next write in Node while the kernel has room
    p.server.send(first);
    expect(direct.send(second, () => undefined)).toBe('refused');
    p.server.send(second);
    p.socket.uncork();
    await vi.waitFor(() => expect(p.received).toEqual([first, second]), { timeout: 20_000, interval: 20 });
  });

  it('is never made for a TLS socket, whose descriptor carries ciphertext', async () => {
    const pki = makeTestPki();
    const server = tls.createServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'secureConnection') as Promise<[tls.TLSSocket]>;
    const client = tls.connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', ca: readFileSync(pki.caFile) });
    const [socket] = await accepted;
    cleanups.push(() => {
      client.destroy();
      socket.destroy();
      server.close();
    });
    expect(DirectTextSender.for(socket)).toBeNull();
  });

  it('refuses a closed socket, whose descriptor may already be another', async () => {
    const p = await connectPair();
    const direct = DirectTextSender.for(p.socket);
    if (!direct) throw new Error('the tcp-send-queue addon did not load');
    p.socket.destroy();
    expect(direct.send(message(1, 400), () => undefined)).toBe('refused');
  });
});
