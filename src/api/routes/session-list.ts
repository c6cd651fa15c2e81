// The sessions list the console serves at GET /console/api/sessions (SPEC has no list-sessions route,
// so it is not under /v1). The business rules live here, next to the /v1 presenters and paging, and
// the console mounts them behind its cookie sign-in: one copy of filters, cursors and the item shape.
import type { Static } from '@sinclair/typebox';
import { listSessions, type Db } from '../../store/index.js';
import { ApiError } from '../errors.js';
import { errorResponses, ListOf } from '../schemas/common.js';
import { SessionListItem, SessionListQuery } from '../schemas/session-list.js';
import { pageRequest } from './paging.js';
import { presentList, presentSession } from './present.js';

export const SESSION_LIST_URL = '/console/api/sessions';

/** The route's schema (querystring validated once at the edge; documented in the console's OpenAPI). */
export const sessionListSchema = {
  tags: ['console'],
  summary: 'List sessions',
  description: 'Ascending creation (id) order; filters combine with AND. A console route (SPEC has no list-sessions endpoint).',
  querystring: SessionListQuery,
  response: {
    200: ListOf(SessionListItem, 'Sessions of the organization.'),
    ...errorResponses({
      400: ['invalid_request'],
      401: ['sign_in_required'],
      403: ['insufficient_permissions'],
      500: ['internal_error'],
      503: ['service_unavailable'],
    }),
  },
};

export type SessionListQueryT = Static<typeof SessionListQuery>;

/** One page of an organization's sessions, filtered; invalid combinations are `invalid_request`. */
export async function sessionListPage(db: Db, orgId: string, q: SessionListQueryT) {
  const createdAfter = q.created_after ? new Date(q.created_after) : undefined;
  const createdBefore = q.created_before ? new Date(q.created_before) : undefined;
  if (createdAfter && createdBefore && createdAfter >= createdBefore) {
    throw new ApiError('invalid_request', { param: 'created_before', message: 'created_before must be later than created_after.' });
  }
  const page = pageRequest(q);
  const filter = { status: q.status, mode: q.mode, createdAfter, createdBefore, phoneNumber: q.phone_number };
  return presentList(SESSION_LIST_URL, await listSessions(db, orgId, filter, page), (s) => ({ ...presentSession(s, null, null), end_reason: s.end_reason }));
}
