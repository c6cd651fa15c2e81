// Endpoint signing secrets at rest. The service must sign with them, so they are encrypted
// (AES-256-GCM under a key derived from config.secretKey), not hashed. Stored form:
// "v1:" + base64(iv | tag | ciphertext). The key label differs from provider connections'.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { newSecret } from '../ids.js';

const keyOf = (secretKey: string): Buffer => createHash('sha256').update(`voxbridge:webhook-secret:${secretKey}`).digest();

/** A new signing secret as shown to the endpoint's owner, once. */
export const newSigningSecret = (): string => newSecret('whsec_');

export function sealSecret(secretKey: string, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(secretKey), iv);
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `v1:${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
}

/** Throws when the stored value was altered or config.secretKey changed. */
export function openSecret(secretKey: string, stored: string): string {
  if (!stored.startsWith('v1:')) throw new Error('unknown secret format');
  const raw = Buffer.from(stored.slice(3), 'base64');
  const d = createDecipheriv('aes-256-gcm', keyOf(secretKey), raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
}
