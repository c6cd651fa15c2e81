// One validated configuration object, built once at start-up and passed down.
// Sources, later wins: config/default.json, config/<VOXBRIDGE_ENV>.json, environment variables.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const PositiveInt = Type.Integer({ minimum: 1 });

export const ConfigSchema = Type.Object({
  nodeId: Type.String({ minLength: 1 }),
  roles: Type.Array(Type.Union([Type.Literal('api'), Type.Literal('media'), Type.Literal('worker')]), { minItems: 1 }),
  httpHost: Type.String(),
  httpPort: Port,
  publicUrl: Type.String({ pattern: '^https?://' }),
  apiEnvironment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  databaseUrl: Type.String({ pattern: '^postgres(ql)?://' }),
  databaseSchema: Type.String({ pattern: '^[a-z_][a-z0-9_]*$' }),
  redisUrl: Type.String({ pattern: '^rediss?://' }),
  redisKeyPrefix: Type.String(),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  dataDir: Type.String({ minLength: 1 }),
  secretKey: Type.String({ minLength: 16 }),
  limits: Type.Object({
    defaultRateLimit: PositiveInt,
    defaultRateWindowSeconds: PositiveInt,
    defaultMaxConcurrentSessions: PositiveInt,
    metadataMaxKeys: PositiveInt,
    metadataMaxBytes: PositiveInt,
    bodyLimitBytes: PositiveInt,
    socketMessageMaxBytes: PositiveInt,
    streamTokenTtlSeconds: PositiveInt,
    reconnectGraceSeconds: PositiveInt,
    inactivitySeconds: PositiveInt,
    idempotencyTtlSeconds: PositiveInt,
    socketConnectsPerMinute: PositiveInt,
    /** A node's claim on a live session (`owner:<id>` in Redis) lives this long unless refreshed (every third of it). */
    ownerClaimTtlSeconds: PositiveInt,
    /** In-process reuse of a verified API key; revocation and org changes apply within it. 0 = off. */
    authCacheTtlMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
  }),
  sip: Type.Object({
    enabled: Type.Boolean(),
    host: Type.String(),
    port: Port,
    transports: Type.Array(Type.Union([Type.Literal('udp'), Type.Literal('tcp')]), { minItems: 1 }),
    advertisedAddress: Type.String({ minLength: 1 }),
    rtpPortMin: Port,
    rtpPortMax: Port,
    rtpTimeoutSeconds: PositiveInt,
    maxConcurrentCalls: PositiveInt,
    realm: Type.String({ minLength: 1 }),
  }),
  rtpengine: Type.Object({
    ng: Type.Union([Type.String({ pattern: '^[^:]+:\\d+$' }), Type.Null()]),
    timeoutMs: PositiveInt,
  }),
  engines: Type.Object({
    stt: Type.Object({
      provider: Type.Union([Type.Literal('pocketsphinx'), Type.Literal('vosk'), Type.Literal('none')]),
      url: Type.Optional(Type.String()),
      defaultLanguage: Type.String({ minLength: 2, maxLength: 2 }),
      poolSize: PositiveInt,
      timeoutMs: PositiveInt,
    }),
    translate: Type.Object({
      provider: Type.Union([Type.Literal('apertium'), Type.Literal('libretranslate'), Type.Literal('none')]),
      url: Type.Optional(Type.String()),
      timeoutMs: PositiveInt,
    }),
    tts: Type.Object({
      provider: Type.Union([Type.Literal('espeak-ng'), Type.Literal('none')]),
      timeoutMs: PositiveInt,
    }),
    pocketsphinx: Type.Object({ hmm: Type.String(), lm: Type.String(), dict: Type.String() }),
  }),
});

export type Config = Static<typeof ConfigSchema>;

/** Environment variables and where they land in the config object. */
const ENV_MAP: Record<string, { path: string[]; kind: 'string' | 'int' | 'bool' | 'list' | 'nullable' }> = {
  VOXBRIDGE_NODE_ID: { path: ['nodeId'], kind: 'string' },
  VOXBRIDGE_ROLES: { path: ['roles'], kind: 'list' },
  HTTP_HOST: { path: ['httpHost'], kind: 'string' },
  HTTP_PORT: { path: ['httpPort'], kind: 'int' },
  PUBLIC_URL: { path: ['publicUrl'], kind: 'string' },
  API_ENVIRONMENT: { path: ['apiEnvironment'], kind: 'string' },
  DATABASE_URL: { path: ['databaseUrl'], kind: 'string' },
  DATABASE_SCHEMA: { path: ['databaseSchema'], kind: 'string' },
  REDIS_URL: { path: ['redisUrl'], kind: 'string' },
  REDIS_KEY_PREFIX: { path: ['redisKeyPrefix'], kind: 'string' },
  LOG_LEVEL: { path: ['logLevel'], kind: 'string' },
  DATA_DIR: { path: ['dataDir'], kind: 'string' },
  SECRET_KEY: { path: ['secretKey'], kind: 'string' },
  SIP_ENABLED: { path: ['sip', 'enabled'], kind: 'bool' },
  SIP_HOST: { path: ['sip', 'host'], kind: 'string' },
  SIP_PORT: { path: ['sip', 'port'], kind: 'int' },
  SIP_TRANSPORTS: { path: ['sip', 'transports'], kind: 'list' },
  SIP_ADVERTISED_ADDRESS: { path: ['sip', 'advertisedAddress'], kind: 'string' },
  RTP_PORT_MIN: { path: ['sip', 'rtpPortMin'], kind: 'int' },
  RTP_PORT_MAX: { path: ['sip', 'rtpPortMax'], kind: 'int' },
  RTP_TIMEOUT_SECONDS: { path: ['sip', 'rtpTimeoutSeconds'], kind: 'int' },
  RTPENGINE_NG: { path: ['rtpengine', 'ng'], kind: 'nullable' },
  STT_PROVIDER: { path: ['engines', 'stt', 'provider'], kind: 'string' },
  STT_URL: { path: ['engines', 'stt', 'url'], kind: 'string' },
  STT_POOL_SIZE: { path: ['engines', 'stt', 'poolSize'], kind: 'int' },
  STT_DEFAULT_LANGUAGE: { path: ['engines', 'stt', 'defaultLanguage'], kind: 'string' },
  TRANSLATE_PROVIDER: { path: ['engines', 'translate', 'provider'], kind: 'string' },
  TRANSLATE_URL: { path: ['engines', 'translate', 'url'], kind: 'string' },
  TTS_PROVIDER: { path: ['engines', 'tts', 'provider'], kind: 'string' },
  POCKETSPHINX_HMM: { path: ['engines', 'pocketsphinx', 'hmm'], kind: 'string' },
};

export class ConfigError extends Error {}

type Json = Record<string, unknown>;

function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
      ? deepMerge(b as Json, v as Json)
      : v;
  }
  return out;
}

function setPath(obj: Json, keys: string[], value: unknown): void {
  let cur = obj;
  for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Json;
  cur[keys[keys.length - 1]] = value;
}

function fromEnv(env: NodeJS.ProcessEnv): Json {
  const out: Json = {};
  for (const [name, { path: keys, kind }] of Object.entries(ENV_MAP)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    let value: unknown = raw;
    if (kind === 'int') {
      value = /^-?\d+$/.test(raw) ? Number(raw) : raw; // left as text so validation names it
    } else if (kind === 'bool') {
      value = raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : raw;
    } else if (kind === 'list') {
      value = raw.split(',').map((s) => s.trim()).filter(Boolean);
    } else if (kind === 'nullable') {
      value = raw === 'none' || raw === 'off' ? null : raw;
    }
    setPath(out, keys, value);
  }
  return out;
}

function readJson(file: string): Json {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch (err) {
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

const envNameOf = (keys: string[]): string =>
  Object.entries(ENV_MAP).find(([, m]) => m.path.join('.') === keys.join('.'))?.[0] ?? '';

/**
 * Loads and validates the configuration. `overrides` (tests, embedding) apply last.
 * Throws ConfigError naming every bad setting and, where there is one, its environment variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Json = {}): Config {
  const dir = env.VOXBRIDGE_CONFIG_DIR ?? path.join(packageRoot, 'config');
  let merged = readJson(path.join(dir, 'default.json'));
  const profile = env.VOXBRIDGE_ENV;
  if (profile) {
    const file = path.join(dir, `${profile}.json`);
    if (!existsSync(file)) throw new ConfigError(`VOXBRIDGE_ENV=${profile} but ${file} does not exist`);
    merged = deepMerge(merged, readJson(file));
  }
  merged = deepMerge(deepMerge(merged, fromEnv(env)), overrides);
  if (!Value.Check(ConfigSchema, merged)) {
    const problems = [...Value.Errors(ConfigSchema, merged)].slice(0, 10).map((e) => {
      const keys = e.path.split('/').filter(Boolean);
      const envName = envNameOf(keys);
      return `  ${keys.join('.') || '(root)'}${envName ? ` (${envName})` : ''}: ${e.message}, got ${JSON.stringify(e.value)}`;
    });
    throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
  }
  const cfg = merged;
  if (cfg.sip.rtpPortMin >= cfg.sip.rtpPortMax) {
    throw new ConfigError(`invalid configuration: sip.rtpPortMin (RTP_PORT_MIN) must be below sip.rtpPortMax (RTP_PORT_MAX)`);
  }
  if (cfg.apiEnvironment === 'live' && cfg.secretKey.startsWith('dev-only')) {
    throw new ConfigError('invalid configuration: secretKey (SECRET_KEY) must be set to a private random value when API_ENVIRONMENT=live');
  }
  cfg.engines.pocketsphinx.hmm = path.resolve(packageRoot, cfg.engines.pocketsphinx.hmm);
  cfg.dataDir = path.resolve(packageRoot, cfg.dataDir);
  return cfg;
}
