// API keys of the signed-in user's organization (SPEC: "Key creation and revocation happen in the
// developer portal"). The store's createApiKey/revokeApiKey are the same the admin CLI uses.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../api/index.js';
import { DEFAULT_SCOPES } from '../api/index.js';
import { apiKeyExistsInOrg, createApiKey, listOrgApiKeys, revokeApiKey } from '../store/index.js';
import { requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

const CreateKeyBody = Type.Object(
  {
    environment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    scopes: Type.Array(Type.Union(DEFAULT_SCOPES.map((s) => Type.Literal(s))), { minItems: 1, uniqueItems: true }),
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  },
  { additionalProperties: false },
);

const tags = ['console'];

export default async function consoleKeyRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db } = deps;

  async function orgMember(req: Parameters<typeof requireSignIn>[1], write: boolean) {
    const { signIn } = await requireSignIn(store, req);
    if (!signIn.orgId) throw new ApiError('insufficient_permissions');
    if (write && signIn.role === 'viewer') throw new ApiError('insufficient_permissions', { message: 'Viewers cannot manage API keys.' });
    return signIn.orgId;
  }

  app.get('/console/api/keys', { schema: { tags } }, async (req) => {
    const orgId = await orgMember(req, false);
    // "Last used" is the last session the key created: the gateway records no per-request use.
    const rows = await listOrgApiKeys(db, orgId);
    return { object: 'list', data: rows.map((r) => ({ object: 'api_key', ...r })) };
  });

  app.post<{ Body: Static<typeof CreateKeyBody> }>('/console/api/keys', { schema: { tags, body: CreateKeyBody } }, async (req, reply) => {
    const orgId = await orgMember(req, true);
    const expiresAt = req.body.expires_at ? new Date(req.body.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now())
      throw new ApiError('invalid_request', { param: 'expires_at', message: 'expires_at must be in the future.' });
    reply.code(201);
    return createApiKey(db, { orgId, environment: req.body.environment, scopes: req.body.scopes, expiresAt });
  });

  app.post<{ Params: { id: string } }>('/console/api/keys/:id/revoke', { schema: { tags } }, async (req) => {
    const orgId = await orgMember(req, true);
    // Same 404 rule as the API: a key of another organization does not exist for this user.
    if (!(await apiKeyExistsInOrg(db, req.params.id, orgId))) throw new ApiError('api_key_not_found');
    return revokeApiKey(db, req.params.id);
  });
}
