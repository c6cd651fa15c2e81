// GET /console/api/sessions (SPEC has no list-sessions route, so it is a console route): the query and the item.
import { Type } from '@sinclair/typebox';
import { PageQuery } from './common.js';
import { SESSION_MODES } from '../../sessions/index.js';
import { SessionRetrieved } from './sessions.js';

export const SessionListQuery = Type.Object(
  {
    ...PageQuery.properties,
    status: Type.Optional(
      Type.Union([Type.Literal('created'), Type.Literal('active'), Type.Literal('ended')], { description: 'Only sessions in this status.' }),
    ),
    mode: Type.Optional(
      Type.Union(
        SESSION_MODES.map((m) => Type.Literal(m)),
        { description: 'Only sessions of this mode.' },
      ),
    ),
    created_after: Type.Optional(Type.String({ format: 'date-time', description: 'Only sessions created at or after this time (ISO 8601).' })),
    created_before: Type.Optional(Type.String({ format: 'date-time', description: 'Only sessions created before this time (ISO 8601).' })),
    phone_number: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Only sessions routed to or from this E.164 number.' })),
  },
  { additionalProperties: false },
);

/**
 * A list item: the retrieve object without `stream` (no tokens are issued by a list) and without
 * `call`, plus `end_reason` (the console's overview shows sessions that ended in error).
 */
export const SessionListItem = Type.Composite(
  [
    Type.Omit(SessionRetrieved, ['stream', 'call']),
    Type.Object({
      end_reason: Type.Union([Type.String(), Type.Null()], {
        description: 'Why an ended session ended (e.g. api_end, inactivity_timeout); null while not ended.',
      }),
    }),
  ],
  { description: 'A session as listed.' },
);
