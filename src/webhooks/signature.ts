// The `service-signature` header (SPEC "Webhook delivery" leaves the format open; ours follows the
// common `t=…,v1=…` scheme): t is the unix time in seconds, each v1 the hex HMAC-SHA256 of
// "<t>.<raw body>" under one of the endpoint's active secrets (two during a rotation).
// Also used for agent tool webhooks, which are signed the same way.
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'service-signature';

/** Builds the header value; `secrets` is every secret currently signing (newest first). */
export function signatureHeader(secrets: readonly string[], rawBody: string, nowMs = Date.now()): string {
  const t = Math.floor(nowMs / 1000);
  const parts = [`t=${t}`];
  for (const secret of secrets) {
    parts.push(`v1=${createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex')}`);
  }
  return parts.join(',');
}
