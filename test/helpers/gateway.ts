// Test isolation: each test file gets its own PostgreSQL schema and Redis key prefix, and binds
// port 0 everywhere, so files run in parallel on one machine without seeing each other.
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/server.js';
import { createApiKey, createOrg, updateOrg, type UpdateOrgInput } from '../../src/store/index.js';
import { createPool } from '../../src/store/index.js';
import { createRedis } from '../../src/coord/redis.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://voxbridge:voxbridge@127.0.0.1:5432/voxbridge_test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** A configuration isolated for one test file. `overrides` is merged last. */
export function testConfig(overrides: Record<string, unknown> = {}): Config {
  const schema = uniqueName('t');
  return loadConfig(
    {},
    {
      databaseUrl: TEST_DATABASE_URL,
      databaseSchema: schema,
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: `${schema}:`,
      httpHost: '127.0.0.1',
      httpPort: 0,
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      // The control plane only, unless a test asks for the media role (engines, sockets, SIP) itself.
      roles: ['api', 'worker'],
      // Tests change organizations and keys and check the effect at once: no auth cache.
      ...overrides,
      limits: { authCacheTtlMs: 0, ...(overrides.limits as object | undefined) },
      // SIP (media role only) on loopback and a free port, never the shared 5060. No admission by the media
      // clock or the loop: a busy test machine's late ticks must not turn a test's calls away (sip-overload
      // and stream-overload test it).
      sip: {
        host: '127.0.0.1',
        port: 0,
        advertisedAddress: '127.0.0.1',
        overloadLatePercent: 0,
        overloadLoopPercent: 0,
        ...(overrides.sip as object | undefined),
      },
    },
  );
}

/** Drops the test's schema and Redis keys. */
export async function dropTestState(config: Config): Promise<void> {
  const pool = createPool(config.databaseUrl, 'public', undefined, 1);
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${config.databaseSchema} CASCADE`);
  } finally {
    await pool.end();
  }
  const redis = createRedis(config.redisUrl, '');
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.redisKeyPrefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export interface TestOrg {
  orgId: string;
  key: string;
  keyId: string;
}

export interface TestGateway extends Gateway {
  /** Creates an organization (generous limits unless overridden) and a key for it. */
  createOrg(opts?: { changes?: UpdateOrgInput; scopes?: string[]; environment?: 'live' | 'test'; expiresAt?: Date }): Promise<TestOrg>;
  /** fetch() against the gateway with the key as Bearer token and JSON bodies. */
  api(key: string | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  stop(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function startTestGateway(overrides: Record<string, unknown> = {}): Promise<TestGateway> {
  const config = testConfig(overrides);
  const gw = await startGateway(config);
  const createTestOrg: TestGateway['createOrg'] = async (opts = {}) => {
    const org = await createOrg(gw.db, {
      name: uniqueName('org'),
      credits: 1000,
      maxConcurrentSessions: 1000,
      rateLimit: 100_000,
      rateWindowSeconds: 60,
      features: ['ai_agent', 'sip'],
    });
    if (opts.changes) await updateOrg(gw.db, org.id, opts.changes);
    const key = await createApiKey(gw.db, {
      orgId: org.id,
      environment: opts.environment ?? config.apiEnvironment,
      scopes: opts.scopes ?? [
        'sessions:read',
        'sessions:write',
        'recordings:read',
        'analysis:read',
        'analysis:write',
        'webhooks:manage',
        'agents:read',
        'agents:write',
      ],
      expiresAt: opts.expiresAt,
    });
    return { orgId: org.id, key: key.key!, keyId: key.id };
  };
  const api: TestGateway['api'] = async (key, method, path, body, headers = {}) => {
    const res = await fetch(`${gw.httpUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* non-JSON bodies stay text */
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
  const stop = async () => {
    await gw.close();
    await dropTestState(config);
  };
  return Object.assign(gw, { createOrg: createTestOrg, api, stop });
}
