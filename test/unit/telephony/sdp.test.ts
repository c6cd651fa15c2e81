import { describe, it, expect } from 'vitest';
import { parseSdp, negotiate, answerOffer, buildSdp, SdpError, answerDirection } from '../../../src/telephony/sdp/sdp.js';

const offer = (m: string, extra = '', c = '10.0.0.5') =>
  ['v=0', 'o=- 1 2 IN IP4 10.0.0.5', 's=-', `c=IN IP4 ${c}`, 't=0 0', m, extra].filter(Boolean).join('\r\n') + '\r\n';

describe('SDP offer/answer', () => {
  it('picks the first supported codec in the offer order', () => {
    const o = offer('m=audio 4000 RTP/AVP 18 8 0 101', 'a=rtpmap:101 telephone-event/8000\r\na=sendrecv');
    const n = negotiate(parseSdp(o));
    expect(n.codec).toEqual({ payloadType: 8, name: 'PCMA' });
    expect(n.dtmfPayloadType).toBe(101);
    expect(n.remoteAddress).toBe('10.0.0.5');
    expect(n.remotePort).toBe(4000);
    expect(n.onHold).toBe(false);
  });

  it('honours PCMU first when offered first, and dynamic telephone-event numbers', () => {
    const o = offer('m=audio 4000 RTP/AVP 0 8 96', 'a=rtpmap:96 telephone-event/8000');
    const { sdp, media } = answerOffer(o, { address: '192.0.2.1', port: 30000, sessionId: '7', sessionVersion: 1 });
    expect(media.codec.name).toBe('PCMU');
    expect(sdp).toContain('m=audio 30000 RTP/AVP 0 96\r\n');
    expect(sdp).toContain('a=rtpmap:96 telephone-event/8000');
    expect(sdp).toContain('c=IN IP4 192.0.2.1');
    expect(sdp).toContain('a=sendrecv');
  });

  it('recognises hold by sendonly, inactive and 0.0.0.0, and answers the mirrored direction', () => {
    expect(negotiate(parseSdp(offer('m=audio 4000 RTP/AVP 0', 'a=sendonly'))).onHold).toBe(true);
    expect(negotiate(parseSdp(offer('m=audio 4000 RTP/AVP 0', 'a=inactive'))).onHold).toBe(true);
    expect(negotiate(parseSdp(offer('m=audio 4000 RTP/AVP 0', '', '0.0.0.0'))).onHold).toBe(true);
    const { sdp } = answerOffer(offer('m=audio 4000 RTP/AVP 0', 'a=sendonly'), { address: '1.2.3.4', port: 2, sessionId: '1', sessionVersion: 1 });
    expect(sdp).toContain('a=recvonly');
    expect(answerDirection('inactive')).toBe('inactive');
    expect(answerDirection('recvonly')).toBe('sendonly');
  });

  it('takes media-level c= over session-level and session-level direction', () => {
    const o = ['v=0', 'o=- 1 1 IN IP4 a', 's=-', 'c=IN IP4 1.1.1.1', 't=0 0', 'a=sendonly', 'm=audio 5 RTP/AVP 0', 'c=IN IP4 2.2.2.2'].join('\r\n');
    const p = parseSdp(o);
    expect(p.audio?.address).toBe('2.2.2.2');
    expect(p.audio?.direction).toBe('sendonly');
  });

  it('rejects offers without a usable codec or malformed bodies', () => {
    expect(() => negotiate(parseSdp(offer('m=audio 4000 RTP/AVP 18 9')))).toThrow(SdpError);
    expect(() => negotiate(parseSdp(offer('m=video 4000 RTP/AVP 96')))).toThrow(SdpError);
    expect(() => parseSdp('hello')).toThrow(SdpError);
    expect(() => parseSdp('v=0\r\nm=audio x RTP/AVP 0\r\n')).toThrow(SdpError);
    const codeOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as SdpError).code;
      }
      return null;
    };
    // Typed codes decide 488 vs 400 (no matching on messages).
    expect(codeOf(() => negotiate(parseSdp(offer('m=audio 4000 RTP/AVP 18 9'))))).toBe('no_common_codec');
    expect(codeOf(() => negotiate(parseSdp(offer('m=video 4000 RTP/AVP 96'))))).toBe('no_audio');
    expect(codeOf(() => parseSdp('hello'))).toBe('malformed');
  });

  it('builds an offer listing our codecs and DTMF', () => {
    const sdp = buildSdp({
      address: '1.2.3.4',
      port: 20000,
      sessionId: '1',
      sessionVersion: 1,
      codecs: [
        { payloadType: 0, name: 'PCMU' },
        { payloadType: 8, name: 'PCMA' },
      ],
      dtmfPayloadType: 101,
      direction: 'sendrecv',
    });
    const back = negotiate(parseSdp(sdp));
    expect(back.codec.name).toBe('PCMU');
    expect(back.dtmfPayloadType).toBe(101);
    expect(sdp).toContain('a=ptime:20');
  });
});
