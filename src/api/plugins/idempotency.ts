// Idempotency-Key on creating POSTs (SPEC.md "Idempotency"), per organization, in Redis for ~24 h:
// same key + same body replays the first response; another body → 400 idempotency_mismatch;
// the first still running → 409 idempotency_conflict with Retry-After.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors.js';
import type { ApiDeps } from '../context.js';

interface StoredRecord {
  state: 'processing' | 'done';
  fingerprint: string;
  status?: number;
  body?: string;
}

const MAX_KEY_LENGTH = 255;
const PROCESSING_TTL_SECONDS = 60; // a crashed request frees its key after this

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyRedisKey?: string;
    idempotencyFingerprint?: string;
  }
}

/** JSON with object keys sorted at every depth: the same body with its keys reordered is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function fingerprint(req: FastifyRequest): string {
  return createHash('sha256')
    .update(req.method)
    .update(req.url.split('?')[0] ?? req.url)
    .update(canonicalJson(req.body ?? null))
    .digest('hex');
}

/** A replayed error answers with this request's id, so the body agrees with X-Request-ID. */
function withRequestId(body: string | undefined, requestId: string): string | undefined {
  if (!body) return body;
  try {
    const parsed = JSON.parse(body) as { error?: { request_id?: unknown } };
    if (parsed?.error && typeof parsed.error === 'object' && 'request_id' in parsed.error) {
      parsed.error.request_id = requestId;
      return JSON.stringify(parsed);
    }
  } catch {
    // Not JSON: replay it as stored.
  }
  return body;
}

async function idempotencyPlugin(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const ttl = deps.config.limits.idempotencyTtlSeconds;

  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    const raw = req.headers['idempotency-key'];
    if (!req.routeOptions.config?.idempotent || typeof raw !== 'string' || !req.auth) return;
    const key = raw.trim();
    if (!key || key.length > MAX_KEY_LENGTH) {
      throw new ApiError('invalid_request', { param: 'Idempotency-Key', message: `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters.` });
    }
    const redisKey = `idem:${req.auth.orgId}:${createHash('sha256').update(key).digest('hex')}`;
    const fp = fingerprint(req);
    const claim: StoredRecord = { state: 'processing', fingerprint: fp };
    const won = await deps.redis.set(redisKey, JSON.stringify(claim), 'EX', PROCESSING_TTL_SECONDS, 'NX');
    if (won) {
      req.idempotencyRedisKey = redisKey;
      req.idempotencyFingerprint = fp;
      return;
    }
    const existingRaw = await deps.redis.get(redisKey);
    const existing = existingRaw ? (JSON.parse(existingRaw) as StoredRecord) : null;
    if (!existing) throw new ApiError('idempotency_conflict', { retryAfter: 1, headers: { 'Retry-After': '1' } });
    if (existing.fingerprint !== fp) throw new ApiError('idempotency_mismatch', { param: 'Idempotency-Key' });
    if (existing.state === 'processing') {
      throw new ApiError('idempotency_conflict', { retryAfter: 1, headers: { 'Retry-After': '1' } });
    }
    reply.header('Idempotent-Replayed', 'true');
    reply.code(existing.status ?? 200).type('application/json; charset=utf-8');
    return reply.send(withRequestId(existing.body, req.id));
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const redisKey = req.idempotencyRedisKey;
    if (!redisKey) return payload;
    req.idempotencyRedisKey = undefined;
    // Server faults, throttling and a credit refusal are not final answers: free the key so a
    // retry (after the window, or a top-up) runs again.
    if (reply.statusCode >= 500 || reply.statusCode === 429 || reply.statusCode === 402) {
      await deps.redis.del(redisKey);
      return payload;
    }
    const record: StoredRecord = { state: 'done', fingerprint: req.idempotencyFingerprint!, status: reply.statusCode, body: String(payload) };
    await deps.redis.set(redisKey, JSON.stringify(record), 'EX', ttl);
    return payload;
  });
}

export default fp(idempotencyPlugin, { name: 'voxbridge-idempotency', dependencies: ['voxbridge-auth'] });
