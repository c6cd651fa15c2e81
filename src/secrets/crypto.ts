// Secrets at rest (provider connection passwords, named engine secrets): AES-256-GCM with a key derived from config.secretKey.
// Stored form: "v1:" + base64(iv | tag | ciphertext).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const keyOf = (secretKey: string): Buffer => createHash('sha256').update(`voxbridge:pcon:${secretKey}`).digest();

export function encryptSecret(secretKey: string, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(secretKey), iv);
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `v1:${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
}

/** Throws when the ciphertext was altered or the key changed. */
export function decryptSecret(secretKey: string, stored: string): string {
  if (!stored.startsWith('v1:')) throw new Error('unknown secret format');
  const raw = Buffer.from(stored.slice(3), 'base64');
  const d = createDecipheriv('aes-256-gcm', keyOf(secretKey), raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
}
