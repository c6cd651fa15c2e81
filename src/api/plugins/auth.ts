// API key authentication: the 401 gates of SPEC.md "Gate failures". The organization, scope and
// credit gates follow the rate limiter and idempotency, in ./gates.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors.js';
import { findApiKeyByHash, hashApiKey, type ApiKeyWithOrgRow } from '../../store/index.js';
import type { ApiDeps, AuthContext, OrgRow } from '../context.js';
import { AuthCache } from './auth-cache.js';

const KEY_PATTERN = /^sk_(live|test)_[0-9a-z]{16,64}$/;

function presentedKey(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1] : ''; // a malformed Authorization header is a malformed key
  }
  const alt = req.headers['x-api-key'];
  return typeof alt === 'string' ? alt.trim() : undefined;
}

async function authenticate(deps: ApiDeps, cache: AuthCache<ApiKeyWithOrgRow>, req: FastifyRequest): Promise<AuthContext> {
  const key = presentedKey(req);
  if (key === undefined && deps.cookieAuth) {
    // No API key at all: a signed-in console browser may stand in for one (CSRF is checked there).
    const viaCookie = await deps.cookieAuth.authenticate(req);
    if (viaCookie) return viaCookie;
  }
  if (!key || !KEY_PATTERN.test(key)) throw new ApiError('api_key_invalid');
  const keyHash = hashApiKey(key);
  let row = cache.get(keyHash);
  if (!row) {
    row = await findApiKeyByHash(deps.db, keyHash);
    if (!row) throw new ApiError('api_key_invalid');
    cache.set(keyHash, row);
  }
  if (row.revoked_at) throw new ApiError('api_key_revoked');
  if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw new ApiError('api_key_expired');
  if (row.environment !== deps.config.apiEnvironment) {
    throw new ApiError('api_key_wrong_environment', {
      message: `This deployment accepts ${deps.config.apiEnvironment} keys (sk_${deps.config.apiEnvironment}_…); a ${row.environment} key was sent.`,
    });
  }
  const { key_id, environment: _e, scopes, expires_at: _x, revoked_at: _r, ...org } = row;
  return { keyId: key_id, orgId: org.id, scopes, org: org };
}

export function setCreditHeaders(reply: { header(k: string, v: string | number): unknown }, org: Pick<OrgRow, 'credits' | 'credits_used'>): void {
  reply.header('X-API-Credits-Remaining', org.credits);
  reply.header('X-API-Credits-Used', org.credits_used);
}

async function authPlugin(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const cache = new AuthCache<ApiKeyWithOrgRow>(deps.authCacheTtlMs ?? 0);
  app.addHook('onRequest', async (req, reply) => {
    const scope = req.routeOptions.config?.scope;
    if (!scope) return;
    const auth = await authenticate(deps, cache, req);
    req.auth = auth;
    setCreditHeaders(reply, auth.org);
  });
}

export default fp(authPlugin, { name: 'voxbridge-auth' });
