// Test-side SRTP (RFC 3711) for AES_CM_128_HMAC_SHA1_80 keyed by SDES (RFC 4568), on node:crypto:
// enough for a test caller to send SRTP to rtpengine and to check what rtpengine sends back.
// Rollover counter stays 0 (tests send far fewer than 65,536 packets).
import { createCipheriv, createHmac, timingSafeEqual } from 'node:crypto';

export interface SrtpContext {
  encKey: Buffer;
  authKey: Buffer;
  salt: Buffer;
}

/** Key stream of AES-128 in counter mode from a 16-byte IV. */
function keystream(key: Buffer, iv: Buffer, length: number): Buffer {
  const c = createCipheriv('aes-128-ctr', key, iv);
  return Buffer.concat([c.update(Buffer.alloc(length)), c.final()]);
}

/** §4.3.1 key derivation (key_derivation_rate 0): labels 0 (cipher key), 1 (auth key), 2 (salt). */
export function srtpContext(inline: string): SrtpContext {
  const raw = Buffer.from(inline, 'base64');
  if (raw.length < 30) throw new Error('SDES inline key must be 30 bytes (16 key + 14 salt)');
  const masterKey = raw.subarray(0, 16);
  const masterSalt = raw.subarray(16, 30);
  const derive = (label: number, length: number): Buffer => {
    const iv = Buffer.alloc(16);
    masterSalt.copy(iv, 0);
    iv[7] = (iv[7] ?? 0) ^ label;
    return keystream(masterKey, iv, length);
  };
  return { encKey: derive(0, 16), authKey: derive(1, 20), salt: derive(2, 14) };
}

function headerLength(p: Buffer): number {
  const cc = (p[0] ?? 0) & 0x0f;
  let n = 12 + 4 * cc;
  if (((p[0] ?? 0) & 0x10) !== 0) n += 4 + 4 * p.readUInt16BE(n + 2);
  return n;
}

function packetIv(ctx: SrtpContext, ssrc: number, seq: number): Buffer {
  const iv = Buffer.alloc(16);
  ctx.salt.copy(iv, 0);
  const x = Buffer.alloc(16);
  x.writeUInt32BE(ssrc >>> 0, 4);
  x.writeUInt16BE(seq, 12); // index i = ROC(0) * 2^16 + SEQ, placed at bits 16..63
  for (let i = 0; i < 16; i++) iv[i] = (iv[i] ?? 0) ^ (x[i] ?? 0);
  return iv;
}

const tagOf = (ctx: SrtpContext, authenticated: Buffer): Buffer =>
  createHmac('sha1', ctx.authKey).update(authenticated).update(Buffer.alloc(4)).digest().subarray(0, 10);

/** RTP packet → SRTP packet. */
export function protect(ctx: SrtpContext, packet: Uint8Array): Buffer {
  const rtp = Buffer.from(packet);
  const h = headerLength(rtp);
  const ks = keystream(ctx.encKey, packetIv(ctx, rtp.readUInt32BE(8), rtp.readUInt16BE(2)), rtp.length - h);
  const out = Buffer.from(rtp);
  for (let i = h; i < out.length; i++) out[i] = (out[i] ?? 0) ^ (ks[i - h] ?? 0);
  return Buffer.concat([out, tagOf(ctx, out)]);
}

/** SRTP packet → RTP packet, or null when the authentication tag does not verify. */
export function unprotect(ctx: SrtpContext, srtp: Buffer): Buffer | null {
  if (srtp.length < 22) return null;
  const body = srtp.subarray(0, srtp.length - 10);
  if (!timingSafeEqual(tagOf(ctx, body), srtp.subarray(srtp.length - 10))) return null;
  const h = headerLength(body);
  const ks = keystream(ctx.encKey, packetIv(ctx, body.readUInt32BE(8), body.readUInt16BE(2)), body.length - h);
  const out = Buffer.from(body);
  for (let i = h; i < out.length; i++) out[i] = (out[i] ?? 0) ^ (ks[i - h] ?? 0);
  return out;
}
