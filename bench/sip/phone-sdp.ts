// The SDP the benchmarks' simulated phones send: one G.711 codec at a loopback port, DTMF 101.
import { buildSdp } from '../../src/telephony/sdp/sdp.js';

export function loopbackPhoneSdp(port: number, sessionId: string, codec: 'PCMA' | 'PCMU' = 'PCMA'): string {
  return buildSdp({
    address: '127.0.0.1',
    port,
    sessionId,
    sessionVersion: 1,
    codecs: [codec === 'PCMA' ? { payloadType: 8, name: 'PCMA' } : { payloadType: 0, name: 'PCMU' }],
    dtmfPayloadType: 101,
    direction: 'sendrecv',
  });
}
