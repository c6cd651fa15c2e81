import { describe, expect, it } from 'vitest';
import { alawDecode, alawEncode, mulawDecode, mulawEncode, mulawDecodeInto, MULAW_SILENCE, ALAW_SILENCE } from '../../../src/media/index.js';
import { defined } from '../../helpers/defined.js';

describe('G.711 mu-law', () => {
  it('decodes reference code words (ITU-T G.711 table 2)', () => {
    expect(Array.from(mulawDecode(Uint8Array.from([0xff, 0x7f, 0x00, 0x80, 0xfe, 0x7e])))).toEqual([0, 0, -32124, 32124, 8, -8]);
  });

  it('encodes reference samples', () => {
    expect(Array.from(mulawEncode(Int16Array.from([0, 1000, -1000, 32767, -32768])))).toEqual([0xff, 0xce, 0x4e, 0x80, 0x00]);
    expect(mulawEncode(new Int16Array(1))[0]).toBe(MULAW_SILENCE);
  });

  it('round-trips every code word exactly (decode then encode is identity, save negative zero)', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const back = mulawEncode(mulawDecode(all));
    for (let i = 0; i < 256; i++) expect(back[i]).toBe(i === 0x7f ? 0xff : i);
  });

  it('keeps quantization error within one step for any sample', () => {
    const pcm = Int16Array.from({ length: 2000 }, (_, i) => Math.round(-32768 + i * 32.767));
    const back = mulawDecode(mulawEncode(pcm));
    for (let i = 0; i < pcm.length; i++) {
      // Segment step is 2^(seg+3); error is at most half a step plus the bias rounding.
      const sample = defined(pcm[i]);
      expect(Math.abs(defined(back[i], `decoded sample ${i}`) - sample)).toBeLessThanOrEqual(Math.max(8, Math.abs(sample) / 16));
    }
  });

  it('decodes into a caller buffer without allocating a new one', () => {
    const out = new Int16Array(3);
    expect(mulawDecodeInto(Uint8Array.from([0xff, 0x80, 0x00]), out)).toBe(out);
    expect(Array.from(out)).toEqual([0, 32124, -32124]);
  });
});

describe('G.711 A-law', () => {
  it('decodes reference code words', () => {
    expect(Array.from(alawDecode(Uint8Array.from([0xd5, 0x55, 0xaa, 0x2a])))).toEqual([8, -8, 32256, -32256]);
  });

  it('encodes reference samples', () => {
    expect(Array.from(alawEncode(Int16Array.from([0, 1000, -1000, 32767, -32768])))).toEqual([0xd5, 0xfa, 0x7a, 0xaa, 0x2a]);
    expect(alawEncode(new Int16Array(1))[0]).toBe(ALAW_SILENCE);
  });

  it('round-trips every code word exactly', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(Array.from(alawEncode(alawDecode(all)))).toEqual(Array.from(all));
  });
});
