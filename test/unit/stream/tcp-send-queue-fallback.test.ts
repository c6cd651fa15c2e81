// On a host where the TCP send-queue addon cannot be built (no compiler, no Node headers) the stream
// socket still works, unbounded in the kernel, written and read through ws alone, and the reason is there for the start-up warning. The
// build is made to fail by mocking the one call that runs it; this file has its own module state.
import { once } from 'node:events';
import net from 'node:net';
import type * as ChildProcess from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { DirectTextSender } from '../../../src/stream/direct-send.js';
import { boundUnsentBytes } from '../../../src/stream/tcp-send-queue.js';
import { StreamTickReader } from '../../../src/stream/tick-reader.js';
import { MediaClock } from '../../../src/media/index.js';

vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof ChildProcess>();
  return {
    ...real,
    execFileSync: () => {
      throw Object.assign(new Error('exit 1'), { stderr: Buffer.from('build-tcp-send-queue: gcc not found; install the Debian package gcc') });
    },
  };
});

describe('the kernel send-queue bound without its addon', () => {
  it('reports why it is not bounded and leaves the socket usable', async () => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    const [accepted] = (await once(server, 'connection')) as [net.Socket];
    try {
      const result = boundUnsentBytes(accepted);
      expect(result).toEqual({ bounded: false, reason: expect.stringContaining('gcc not found') });
      expect(DirectTextSender.for(accepted)).toBeNull(); // audio.output then goes through ws
      expect(StreamTickReader.on(new MediaClock(20, 10))).toBeNull(); // and Node and ws read the clients' messages
      accepted.write('still works');
      const [data] = (await once(client, 'data')) as [Buffer];
      expect(data.toString()).toBe('still works');
    } finally {
      client.destroy();
      accepted.destroy();
      server.close();
    }
  });
});
