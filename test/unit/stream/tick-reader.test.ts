// Stream sockets read at the media clock (src/stream/tick-reader.ts): a real `ws` client and server on
// loopback, the server's socket taken by the reader on a real 20 ms clock. What `ws` would have delivered
// must arrive the same, in order, and everything the reader leaves to `ws` (control frames, close,
// fragments, binary, oversized and invalid frames, end of stream) must behave as without it.
import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { constants } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { MediaClock } from '../../../src/media/index.js';
import { StreamTickReader } from '../../../src/stream/tick-reader.js';
import { tcpSendQueueAddon } from '../../../src/stream/tcp-send-queue.js';

interface Pair {
  server: WebSocket;
  client: WebSocket;
  /** What the server's 'message' events carried, binary ones as `<binary n>`. */
  received: string[];
  reader: StreamTickReader;
  wss: WebSocketServer;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function newClock(): MediaClock {
  const clock = new MediaClock(20, 10);
  clock.setSubTicks(4);
  cleanups.push(() => clock.stop());
  return clock;
}

function newReader(): StreamTickReader {
  const reader = StreamTickReader.on(newClock());
  if (!reader) throw new Error('the tcp-send-queue addon did not load');
  return reader;
}

async function connectPair(opts: { maxPayload?: number; reader?: StreamTickReader; beforeTake?: (client: WebSocket) => Promise<void> } = {}): Promise<Pair> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, maxPayload: opts.maxPayload });
  await once(wss, 'listening');
  const reader = opts.reader ?? newReader();
  const received: string[] = [];
  const accepted = new Promise<WebSocket>((resolve) =>
    wss.once('connection', (server: WebSocket) => {
      server.pause(); // as the stream server does until the connection is admitted
      server.on('error', () => undefined); // the frames ws refuses (its close code is what is checked)
      server.on('message', (data: Buffer, isBinary: boolean) => received.push(isBinary ? `<binary ${data.length}>` : data.toString()));
      resolve(server);
    }),
  );
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { perMessageDeflate: false });
  const [server] = await Promise.all([accepted, once(client, 'open')]);
  await opts.beforeTake?.(client);
  if (!reader.take(server)) throw new Error('socket not taken');
  cleanups.push(() => {
    client.terminate();
    server.terminate();
    wss.close();
  });
  return { server, client, received, reader, wss };
}

const until = (check: () => void) => vi.waitFor(check, { timeout: 10_000, interval: 5 });

describe('stream sockets read at the media clock', () => {
  it('delivers text messages whole and in order, small and large, sent in bursts and one by one', async () => {
    const p = await connectPair();
    const sent: string[] = [];
    for (let i = 0; i < 300; i++) {
      const text = JSON.stringify({ i, pad: 'é'.repeat((i * 97) % 3000) });
      sent.push(text);
      p.client.send(text);
      if (i % 50 === 0) await until(() => expect(p.received.length).toBe(i + 1)); // some arrive alone
    }
    await until(() => expect(p.received.length).toBe(sent.length));
    expect(p.received).toEqual(sent);
    expect(p.reader.size).toBe(1);
  });

  it('reads what arrived before it took the socket first', async () => {
    const early = ['one', 'two', 'three'];
    const p = await connectPair({
      beforeTake: async (client) => {
        for (const m of early) client.send(m);
        await new Promise((r) => setTimeout(r, 50)); // Node reads them into the paused socket meanwhile
      },
    });
    p.client.send('four');
    await until(() => expect(p.received).toEqual([...early, 'four']));
  });

  it('keeps reading after a client ping (answered by ws) and counts the server ping`s pong', async () => {
    const p = await connectPair();
    const pong = once(p.client, 'pong');
    p.client.ping(Buffer.from('hi'));
    p.client.send('after ping');
    await pong;
    await until(() => expect(p.received).toEqual(['after ping']));
    const serverPong = once(p.server, 'pong');
    p.server.ping();
    await serverPong;
    p.client.send('after pong');
    await until(() => expect(p.received).toEqual(['after ping', 'after pong']));
    expect(p.reader.size).toBe(1);
  });

  it('hands a message larger than it parses itself to ws, and the rest of the stream with it', async () => {
    const p = await connectPair();
    const big = 'x'.repeat(200_000);
    p.client.send('small');
    p.client.send(big);
    p.client.send('after');
    await until(() => expect(p.received.map((m) => m.length)).toEqual([5, big.length, 5]));
    expect(p.reader.size).toBe(0);
    p.client.send('still read');
    await until(() => expect(p.received.at(-1)).toBe('still read'));
  });

  it('hands binary and fragmented messages to ws', async () => {
    const p = await connectPair();
    p.client.send(Buffer.alloc(100, 1));
    p.client.send('first half', { fin: false });
    p.client.send(' second half', { fin: true });
    p.client.send('text');
    await until(() => expect(p.received).toEqual(['<binary 100>', 'first half second half', 'text']));
  });

  it('leaves invalid UTF-8 to ws, which closes 1007', async () => {
    const p = await connectPair();
    const closed = once(p.client, 'close') as Promise<[number, Buffer]>;
    // A raw masked text frame (mask 0) holding an invalid UTF-8 byte.
    (p.client as unknown as { _socket: Socket })._socket.write(Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0x61, 0xff]));
    const [code] = await closed;
    expect(code).toBe(1007);
    expect(p.received).toEqual([]);
  });

  it('leaves the frame above maxPayload to ws, which closes 1009', async () => {
    const p = await connectPair({ maxPayload: 1000 });
    const closed = once(p.client, 'close') as Promise<[number, Buffer]>;
    p.client.send('ok');
    p.client.send('y'.repeat(5000));
    const [code] = await closed;
    expect(code).toBe(1009);
    expect(p.received).toEqual(['ok']);
  });

  it('completes the closing handshake a client starts', async () => {
    const p = await connectPair();
    const serverClosed = once(p.server, 'close') as Promise<[number, Buffer]>;
    const clientClosed = once(p.client, 'close') as Promise<[number, Buffer]>;
    p.client.send('last');
    p.client.close(1001, 'bye');
    const [[code, reason]] = await Promise.all([serverClosed, clientClosed]);
    expect(code).toBe(1001);
    expect(reason.toString()).toBe('bye');
    expect(p.received).toEqual(['last']);
    await until(() => expect(p.reader.size).toBe(0));
  });

  it('completes the closing handshake the server starts', async () => {
    const p = await connectPair();
    const clientClosed = once(p.client, 'close') as Promise<[number, Buffer]>;
    const serverClosed = once(p.server, 'close');
    p.server.close(4000, 'done');
    const [[code]] = await Promise.all([clientClosed, serverClosed]);
    expect(code).toBe(4000);
  });

  it('sees a client that drops the connection without a close frame (FIN, then RST)', async () => {
    for (const how of ['end', 'reset'] as const) {
      const p = await connectPair();
      const serverClosed = once(p.server, 'close') as Promise<[number, Buffer]>;
      p.client.send('before');
      await until(() => expect(p.received).toEqual(['before']));
      const raw = (p.client as unknown as { _socket: Socket })._socket;
      if (how === 'end') raw.end();
      else raw.resetAndDestroy();
      const [code] = await serverClosed;
      expect(code).toBe(1006);
      await until(() => expect(p.reader.size).toBe(0));
    }
  });

  it('reads many sockets, one of them closing while the others go on, and stops the clock when none is left', async () => {
    const reader = newReader();
    const pairs = await Promise.all(Array.from({ length: 20 }, () => connectPair({ reader })));
    expect(reader.size).toBe(20);
    pairs[3]!.server.terminate(); // its descriptor is closed and may be reused
    for (const [i, p] of pairs.entries()) for (let k = 0; k < 5; k++) p.client.send(`${i}:${k}`);
    for (const [i, p] of pairs.entries()) {
      if (i === 3) continue;
      await until(() => expect(p.received).toEqual([0, 1, 2, 3, 4].map((k) => `${i}:${k}`)));
    }
    for (const p of pairs) p.client.close();
    await until(() => expect(reader.size).toBe(0));
  });

  it('hands every socket back to Node when its epoll descriptor fails', async () => {
    const addon = tcpSendQueueAddon();
    if (!addon) throw new Error('the tcp-send-queue addon did not load');
    let failing = false;
    const reader = new StreamTickReader(newClock(), {
      pollCreate: () => addon.pollCreate(),
      pollAdd: (epfd, fd) => addon.pollAdd(epfd, fd),
      pollRemove: (epfd, fd) => addon.pollRemove(epfd, fd),
      pollClose: (epfd) => addon.pollClose(epfd),
      recvReady: (...args) => (failing ? -constants.errno.EBADF : addon.recvReady(...args)),
    });
    const p = await connectPair({ reader });
    p.client.send('before');
    await until(() => expect(p.received).toEqual(['before']));
    failing = true;
    p.client.send('after');
    await until(() => expect(p.received).toEqual(['before', 'after']));
    expect(reader.size).toBe(0);
  });
});
