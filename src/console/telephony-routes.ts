// Numbers and connections of the signed-in owner's organization (SPEC has no /v1 routes for them;
// the admin CLI provisions connections). Owners may add numbers to an existing active connection
// (the same store functions as `voxbridge admin number add`). Connection credentials never leave the
// database: only whether a username and password are set.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../api/index.js';
import { createPhoneNumber, findPhoneNumber, getConnection, listOrgConnections, listOrgNumbers } from '../store/index.js';
import { requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

const tags = ['console'];

const AddNumberBody = Type.Object(
  {
    number: Type.String({ minLength: 1, maxLength: 32, description: 'E.164: + and 7 to 15 digits (as `voxbridge admin number add`).' }),
    connection_id: Type.String({ minLength: 1, maxLength: 100, description: 'An active connection of the organization.' }),
  },
  { additionalProperties: false },
);
const E164 = /^\+[1-9]\d{6,14}$/;
const AddedNumber = Type.Object({
  object: Type.Literal('phone_number'),
  id: Type.String(),
  number: Type.String(),
  connection_id: Type.String(),
  created_at: Type.String(),
});

export default async function consoleTelephonyRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db } = deps;
  const ownerOf = new WeakMap<FastifyRequest, string>();

  async function owner(req: FastifyRequest, message = 'Only organization owners see numbers and connections.'): Promise<string> {
    const { signIn } = await requireSignIn(store, req);
    if (!signIn.orgId || signIn.role !== 'owner') throw new ApiError('insufficient_permissions', { message });
    return signIn.orgId;
  }

  app.get('/console/api/connections', { schema: { tags } }, async (req) => {
    const orgId = await owner(req);
    const rows = await listOrgConnections(db, orgId);
    return { object: 'list', data: rows.map((r) => ({ object: 'connection', ...r })) };
  });

  app.get('/console/api/numbers', { schema: { tags } }, async (req) => {
    const orgId = await owner(req);
    const rows = await listOrgNumbers(db, orgId);
    return { object: 'list', data: rows.map((r) => ({ object: 'phone_number', ...r })) };
  });

  app.post<{ Body: Static<typeof AddNumberBody> }>(
    '/console/api/numbers',
    {
      schema: { tags, summary: 'Add a managed number to a connection (owners)', body: AddNumberBody, response: { 201: AddedNumber } },
      // The owner check (and CSRF) comes before the body is validated: others learn nothing from a 400.
      onRequest: async (req) => {
        ownerOf.set(req, await owner(req, 'Only organization owners add numbers.'));
      },
    },
    async (req, reply) => {
      const orgId = ownerOf.get(req) as string;
      const { number, connection_id: connectionId } = req.body;
      if (!E164.test(number))
        throw new ApiError('validation_error', { param: 'number', message: `'number' must be E.164: + and 7 to 15 digits, e.g. +14155550100.` });
      const connection = await getConnection(db, connectionId);
      // Another organization's connection does not exist for this owner (the API's 404 rule).
      if (!connection || connection.org_id !== orgId || connection.status !== 'active')
        throw new ApiError('connection_not_found', { param: 'connection_id', message: `No active connection '${connectionId}' in this organization.` });
      if (await findPhoneNumber(db, number)) throw new ApiError('phone_number_taken', { param: 'number' });
      try {
        const n = await createPhoneNumber(db, { orgId, number, connectionId });
        reply.code(201);
        return { object: 'phone_number' as const, id: n.id, number: n.number, connection_id: connectionId, created_at: n.created_at.toISOString() };
      } catch (err) {
        // Added at the same moment by someone else: the unique index decides.
        if ((err as { code?: string }).code === '23505') throw new ApiError('phone_number_taken', { param: 'number' });
        throw err;
      }
    },
  );
}
