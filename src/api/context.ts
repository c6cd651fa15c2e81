import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import type { Db, OrgRecord } from '../store/index.js';
import type { EngineCapabilities } from '../speech/index.js';

/** What an authenticated request carries after the auth plugin ran. */
export interface AuthContext {
  keyId: string;
  orgId: string;
  scopes: string[];
  org: OrgRow;
}

/** The organization as the gates see it (the store's record without its timestamps). */
export type OrgRow = Omit<OrgRecord, 'created_at' | 'updated_at'>;

export type Scope =
  'sessions:read' | 'sessions:write' | 'recordings:read' | 'analysis:read' | 'analysis:write' | 'webhooks:manage' | 'agents:read' | 'agents:write';

export const DEFAULT_SCOPES: Scope[] = [
  'sessions:read',
  'sessions:write',
  'recordings:read',
  'analysis:read',
  'analysis:write',
  'webhooks:manage',
  'agents:read',
  'agents:write',
];

/**
 * Resolves a signed-in console browser (cookie) to the same organization context an API key gives,
 * so the console is served by the very same /v1 handlers (src/console/cookie-auth.ts).
 * Returns null when the request carries no console cookie; throws the catalog's errors otherwise.
 */
export interface CookieAuthenticator {
  authenticate(req: FastifyRequest): Promise<AuthContext | null>;
}

/** Dependencies every route plugin receives; later planes add theirs (sessions registry, telephony, engines). */
export interface ApiDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  /** When present, translation sessions no configured engine can serve are refused at create. */
  engines?: EngineCapabilities;
  /** The engines an organization's sessions use (its own choice, else the node's); preferred over `engines`. */
  enginesFor?: (orgId: string) => Promise<EngineCapabilities>;
  /**
   * How long an authenticated API key (with its organization) is reused in-process, in ms.
   * 0 or absent: every request reads PostgreSQL. See plugins/auth-cache.ts for what staleness it allows.
   */
  authCacheTtlMs?: number;
  /** Present when the web console is enabled: cookie sign-in as an alternative to an API key. */
  cookieAuth?: CookieAuthenticator;
  /**
   * Present on a node with telephony: the live RTP/RTCP quality of a leg it carries, shown
   * on GET /v1/sessions/{id}; null when another node carries it (the stored final value shows once it ends).
   */
  liveCallQuality?: (sessionId: string, callId: string) => object | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
  interface FastifyContextConfig {
    /** Scope the route requires; routes without one are public (health, metrics, openapi). */
    scope?: Scope;
    /** POST that creates: honours Idempotency-Key. */
    idempotent?: boolean;
    /** Requires credits > 0 (402 insufficient_api_credits otherwise). */
    creditGated?: boolean;
  }
}

/**
 * The instance a route plugin receives. With the TypeBox type provider, handlers see params, query,
 * body and headers as their schemas' types, and what they return (or `reply.send`) is checked against
 * the route's response schema for its status code; the serializer enforces the same schemas at run time.
 */
export type ApiApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * The caller of a route that declares a `scope`: the auth plugin sets it before any handler runs, so
 * a missing one is a wiring bug, answered 500 internal_error rather than a crash on `undefined`.
 */
export function authOf(req: FastifyRequest): AuthContext {
  if (!req.auth) throw new Error(`${req.method} ${req.routeOptions.url ?? req.url} reached its handler without authentication: its route declares no scope`);
  return req.auth;
}
