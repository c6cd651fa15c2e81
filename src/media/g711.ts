// G.711 mu-law (PCMU, RTP payload type 0) and A-law (PCMA, payload type 8) codecs.
// The companding rules come from the alawmulaw package; here they are baked into lookup
// tables once at load, so per-frame work is one table read per sample and the `*Into`
// variants let hot paths reuse their output buffers.
// alawmulaw ships CommonJS: under Node's ESM loader only its default export (module.exports) exists.
import alawmulaw from 'alawmulaw';

const { alaw, mulaw } = alawmulaw;

function decodeTable(decodeSample: (s: number) => number): Int16Array {
  const t = new Int16Array(256);
  for (let i = 0; i < 256; i++) t[i] = decodeSample(i);
  return t;
}

// Indexed by the PCM16 sample as an unsigned 16-bit value (sample & 0xffff).
function encodeTable(encodeSample: (s: number) => number): Uint8Array {
  const t = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) t[i] = encodeSample((i << 16) >> 16);
  return t;
}

const MULAW_DECODE = decodeTable(mulaw.decodeSample);
const ALAW_DECODE = decodeTable(alaw.decodeSample);
const MULAW_ENCODE = encodeTable(mulaw.encodeSample);
const ALAW_ENCODE = encodeTable(alaw.encodeSample);

/**
 * The encode tables (indexed by sample & 0xffff), for the RTP addon, which encodes outgoing payloads
 * with these very tables on its send thread (MEDIA_IO=native). Read-only by contract.
 */
export const g711EncodeTables = (): { alaw: Uint8Array; mulaw: Uint8Array } => ({ alaw: ALAW_ENCODE, mulaw: MULAW_ENCODE });

function decodeInto(table: Int16Array, bytes: Uint8Array, out: Int16Array, start: number, end: number): Int16Array {
  // start ≤ i < end ≤ bytes.length; a byte indexes the 256-entry table.
  for (let i = start; i < end; i++) out[i - start] = table[bytes[i] ?? 0] ?? 0;
  return out;
}

function encodeInto(table: Uint8Array, pcm: Int16Array, out: Uint8Array, offset: number): Uint8Array {
  const n = pcm.length;
  // i < n = pcm.length; a 16-bit value indexes the 65,536-entry table.
  for (let i = 0; i < n; i++) out[offset + i] = table[(pcm[i] ?? 0) & 0xffff] ?? 0;
  return out;
}

/** Decodes bytes[start, end) (default: all of them; a packet's payload inside the datagram) into `out`. */
export const mulawDecodeInto = (bytes: Uint8Array, out: Int16Array, start = 0, end = bytes.length): Int16Array =>
  decodeInto(MULAW_DECODE, bytes, out, start, end);
/** Encodes into `out` from `offset` on (a packet's payload inside a batch buffer). */
export const mulawEncodeInto = (pcm: Int16Array, out: Uint8Array, offset = 0): Uint8Array => encodeInto(MULAW_ENCODE, pcm, out, offset);
export const alawDecodeInto = (bytes: Uint8Array, out: Int16Array, start = 0, end = bytes.length): Int16Array =>
  decodeInto(ALAW_DECODE, bytes, out, start, end);
export const alawEncodeInto = (pcm: Int16Array, out: Uint8Array, offset = 0): Uint8Array => encodeInto(ALAW_ENCODE, pcm, out, offset);

export const mulawDecode = (bytes: Uint8Array): Int16Array => mulawDecodeInto(bytes, new Int16Array(bytes.length));
export const mulawEncode = (pcm: Int16Array): Uint8Array => mulawEncodeInto(pcm, new Uint8Array(pcm.length));
export const alawDecode = (bytes: Uint8Array): Int16Array => alawDecodeInto(bytes, new Int16Array(bytes.length));
export const alawEncode = (pcm: Int16Array): Uint8Array => alawEncodeInto(pcm, new Uint8Array(pcm.length));

/** Encoded byte for digital silence: mu-law 0xFF, A-law 0xD5. */
export const MULAW_SILENCE = 0xff;
export const ALAW_SILENCE = 0xd5;
