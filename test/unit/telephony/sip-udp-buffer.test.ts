// The SIP UDP socket's receive buffer (sip.udpReceiveBufferBytes): what the kernel granted is read
// back from the socket itself (`ss -m`), and a size the kernel caps (net.core.rmem_max) is reported.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIP_LIMITS } from '../../../src/telephony/sip/framing.js';
import { makeUdpTransport, type FrontSink, type Transport } from '../../../src/telephony/sip/transports.js';
import { freePort } from '../../helpers/sip-harness.js';

const open: Transport[] = [];
afterEach(() => open.splice(0).forEach((t) => t.destroy()));

const rmemMax = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8').trim());

/** The socket's receive buffer as the kernel holds it (`rb` of `ss -m`, the doubled value); null until it is bound. */
function kernelReceiveBuffer(port: number): number | null {
  const out = execFileSync('ss', ['-uamnH', `sport = :${port}`], { encoding: 'utf8' });
  const rb = /rb(\d+)/.exec(out)?.[1];
  return rb ? Number(rb) : null;
}

async function start(bytes: number): Promise<{ port: number; warnings: Array<Record<string, unknown>> }> {
  const port = await freePort();
  const warnings: Array<Record<string, unknown>> = [];
  const sink: FrontSink = { message: () => {}, refused: () => {}, warn: (_m, fields) => warnings.push(fields) };
  open.push(makeUdpTransport('127.0.0.1', port, DEFAULT_SIP_LIMITS, sink, bytes));
  return { port, warnings };
}

describe('SIP UDP receive buffer', () => {
  it('asks the kernel for the configured size and gets it up to net.core.rmem_max', async () => {
    const asked = Math.min(1 << 20, rmemMax);
    const { port, warnings } = await start(asked);
    await expect.poll(() => kernelReceiveBuffer(port)).toBe(asked * 2);
    expect(warnings).toEqual([]);
  });

  it('says so when the kernel caps it', async () => {
    const asked = rmemMax * 2;
    const { port, warnings } = await start(asked);
    await expect.poll(() => kernelReceiveBuffer(port)).toBe(rmemMax * 2);
    await expect.poll(() => warnings).toEqual([{ asked, granted: rmemMax }]);
  });
});
