// MEDIA_IO=auto on a host where the batched RTP addon cannot be built (no compiler, no Node headers):
// the endpoint must open its socket with dgram and carry media as before, and the reason must be kept
// for the start-up warning. The build is made to fail by mocking the one call that runs it; this file
// has its own module state, so the addon other files load is not touched.
import { describe, expect, it, vi } from 'vitest';
import dgram from 'node:dgram';
import { once } from 'node:events';
import type * as ChildProcess from 'node:child_process';
import { RtpEndpoint } from '../../../src/telephony/rtp/endpoint.js';
import { nativeRtpIoCounts, nativeRtpIoLoadError, tryNativeRtpIoAddon } from '../../../src/telephony/rtp/native-io.js';
import { MediaClock } from '../../../src/media/index.js';
import { parseRtp, serializeRtp } from '../../../src/telephony/rtp/packet.js';
import { mulawEncode } from '../../../src/media/g711.js';

// Hoisted by vitest above the imports: the modules above see the failing build.
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof ChildProcess>();
  return {
    ...real,
    execFileSync: () => {
      throw Object.assign(new Error('exit 1'), { stderr: Buffer.from('build-rtp-io: gcc not found; install the Debian package gcc') });
    },
  };
});

describe('MEDIA_IO=auto without the addon', () => {
  it('keeps the build error and carries media over dgram both ways', async () => {
    expect(tryNativeRtpIoAddon()).toBeNull();
    expect(String(nativeRtpIoLoadError())).toContain('gcc not found');

    const clock = new MediaClock();
    const ep = await RtpEndpoint.open({ bindAddress: '127.0.0.1', portMin: 40000, portMax: 44999, timeoutMs: 5000, clock, nativeIo: true });
    const far = dgram.createSocket('udp4');
    try {
      await new Promise<void>((r) => far.bind(0, '127.0.0.1', () => r()));
      ep.configure({ address: '127.0.0.1', port: far.address().port, payloadType: 0, dtmfPayloadType: null, send: true, expectReceive: true });
      const frames: Int16Array[] = [];
      ep.onFrames((f) => frames.push(f));
      const payload = mulawEncode(new Int16Array(160).fill(2000));
      for (let i = 0; i < 4; i++)
        far.send(serializeRtp({ marker: i === 0, payloadType: 0, sequence: i, timestamp: i * 160, ssrc: 9, payload }), ep.port, '127.0.0.1');
      ep.playFrame(new Int16Array(160).fill(1000));
      const [out] = (await once(far, 'message')) as [Buffer];
      expect(parseRtp(out)?.payloadType).toBe(0);
      await vi.waitFor(() => expect(frames.length).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 10 });
      expect(ep.stats.packetsIn).toBe(4);
      expect(nativeRtpIoCounts()).toBeNull(); // nothing went through a batched socket
    } finally {
      ep.close();
      far.close();
      clock.stop();
    }
  });
});
