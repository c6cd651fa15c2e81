// GET /v1/sessions: an organization's sessions, cursor-paged like GET /v1/agents, with filters. SPEC
// has no list-sessions route; this one is an addition (README "API additions") the console uses.
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { listSessions } from '../../store/index.js';
import { ApiError } from '../errors.js';
import type { ApiDeps } from '../context.js';
import { ListOf, withAuthErrors } from '../schemas/common.js';
import { SessionListItem, SessionListQuery } from '../schemas/session-list.js';
import { pageRequest } from './paging.js';
import { presentList, presentSession } from './present.js';

export default async function sessionListRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.get('/v1/sessions', {
    config: { scope: 'sessions:read' },
    schema: {
      tags: ['sessions'],
      summary: 'List sessions',
      description: 'Scope sessions:read. Ascending creation (id) order; filters combine with AND. Not in SPEC: a gateway addition.',
      querystring: SessionListQuery,
      response: { 200: ListOf(SessionListItem, 'Sessions of the organization.'), ...withAuthErrors({ 400: ['invalid_request'] }) },
    },
  }, async (req) => {
    const q = req.query as Static<typeof SessionListQuery>;
    const createdAfter = q.created_after ? new Date(q.created_after) : undefined;
    const createdBefore = q.created_before ? new Date(q.created_before) : undefined;
    if (createdAfter && createdBefore && createdAfter >= createdBefore) {
      throw new ApiError('invalid_request', { param: 'created_before', message: 'created_before must be later than created_after.' });
    }
    const page = pageRequest(q);
    const filter = { status: q.status, mode: q.mode, createdAfter, createdBefore, phoneNumber: q.phone_number };
    return presentList('/v1/sessions', await listSessions(deps.db, req.auth!.orgId, filter, page), (s) => presentSession(s, null, null));
  });
}
