// Numbers and connections of the signed-in owner's organization, read-only (SPEC has no /v1 routes
// for them; the admin CLI provisions them). Connection credentials never leave the database: only
// whether a username and password are set.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../api/index.js';
import { requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

const tags = ['console'];

export default async function consoleTelephonyRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db } = deps;

  async function owner(req: FastifyRequest): Promise<string> {
    const { signIn } = await requireSignIn(store, req);
    if (!signIn.orgId || signIn.role !== 'owner')
      throw new ApiError('insufficient_permissions', { message: 'Only organization owners see numbers and connections.' });
    return signIn.orgId;
  }

  app.get('/console/api/connections', { schema: { tags } }, async (req) => {
    const orgId = await owner(req);
    const { rows } = await db.query(
      `SELECT c.id, c.provider, c.host, c.port, c.transport, c.status, c.credentials_valid, c.inbound_cidrs,
              (c.username IS NOT NULL AND c.password_enc IS NOT NULL) AS has_credentials,
              (o.default_connection_id = c.id) AS is_default, c.created_at,
              (SELECT count(*)::int FROM phone_numbers n WHERE n.connection_id = c.id) AS numbers
         FROM provider_connections c JOIN organizations o ON o.id = c.org_id
        WHERE c.org_id = $1 ORDER BY c.id`,
      [orgId],
    );
    return { object: 'list', data: rows.map((r) => ({ object: 'connection', ...r })) };
  });

  app.get('/console/api/numbers', { schema: { tags } }, async (req) => {
    const orgId = await owner(req);
    const { rows } = await db.query(
      `SELECT n.id, n.number, n.connection_id, c.provider, c.status AS connection_status, n.created_at
         FROM phone_numbers n LEFT JOIN provider_connections c ON c.id = n.connection_id
        WHERE n.org_id = $1 ORDER BY n.number`,
      [orgId],
    );
    return { object: 'list', data: rows.map((r) => ({ object: 'phone_number', ...r })) };
  });
}
