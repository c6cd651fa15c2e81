// /v1/sessions: create, retrieve, end, transcript and the session's recordings (SPEC "Sessions").
import { issueStreamToken, ownerOf } from '../../coord/index.js';
import { endSession } from '../../sessions/index.js';
import { getSessionWithCall, listSessionRecordings, listTranscriptTurns } from '../../store/index.js';
import { ApiError } from '../errors.js';
import { authOf, type ApiApp, type ApiDeps } from '../context.js';
import { IdParams, ListOf, PageQuery, withAuthErrors } from '../schemas/common.js';
import { CreateSessionBody, SessionCreated, SessionEnded, SessionRetrieved, TranscriptObject } from '../schemas/sessions.js';
import { RecordingListItem } from '../schemas/recordings.js';
import { createSession } from './session-create.js';
import { pageRequest } from './paging.js';
import { presentEndedSession, presentList, presentRecordingItem, presentSession, presentTranscript, streamUrl } from './present.js';

const notFound = (id: string) => new ApiError('session_not_found', { param: 'session_id', message: `No session '${id}' in this organization.` });

export default async function sessionRoutes(app: ApiApp, deps: ApiDeps): Promise<void> {
  const body = CreateSessionBody({ metadataMaxKeys: deps.config.limits.metadataMaxKeys, metadataMaxBytes: deps.config.limits.metadataMaxBytes });

  app.post(
    '/v1/sessions',
    {
      config: { scope: 'sessions:write', idempotent: true, creditGated: true },
      schema: {
        tags: ['sessions'],
        summary: 'Create a session',
        description: 'Scope sessions:write. Honours Idempotency-Key. Needs API credits > 0 (not consumed: session time is billed by duration).',
        body,
        response: {
          201: SessionCreated,
          ...withAuthErrors({
            400: [
              'invalid_request',
              'validation_error',
              'unsupported_mode',
              'routing_failed',
              'sip_not_enabled',
              'no_default_provider',
              'phone_number_not_found',
              'connection_not_found',
              'connection_invalid',
              'idempotency_mismatch',
            ],
            402: ['insufficient_api_credits'],
            403: ['ai_agent_disabled', 'override_not_allowed'],
            404: ['ai_agent_not_found'],
            409: ['idempotency_conflict'],
            429: ['concurrent_session_limit'],
          }),
        },
      },
      // A top-level provider is refused by name (SPEC rule 2) before the schema calls it an unknown field.
      preValidation: async (req) => {
        const b = req.body as Record<string, unknown> | null;
        if (b && typeof b === 'object' && !Array.isArray(b) && 'provider' in b) {
          throw new ApiError('invalid_request', {
            param: 'provider',
            message:
              "'provider' is not a request field: telephony is chosen through 'routing' (phone_number, connection_id or type 'sip'), and the resolved carrier is returned as 'provider'.",
          });
        }
      },
    },
    async (req, reply) => {
      const created = await createSession(deps, authOf(req), req.body);
      reply.code(201);
      return created;
    },
  );

  app.get(
    '/v1/sessions/:id',
    {
      config: { scope: 'sessions:read' },
      schema: {
        tags: ['sessions'],
        summary: 'Retrieve a session',
        description: 'Scope sessions:read. stream (with a freshly issued token) appears only while the session is active.',
        params: IdParams,
        response: { 200: SessionRetrieved, ...withAuthErrors({ 404: ['session_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const s = await getSessionWithCall(deps.db, id, authOf(req).orgId);
      if (!s) throw notFound(id);
      let stream = null;
      if (s.status === 'active') {
        const t = await issueStreamToken(deps.redis, s.id, deps.config.limits.streamTokenTtlSeconds);
        // Scale-out: the socket goes to the node that owns the live session (this one when none does).
        const owner = await ownerOf(deps.redis, s.id);
        stream = { url: streamUrl(owner?.url ?? deps.config.publicUrl, s.id), token: t.token, expires_at: t.expiresAt.toISOString() };
      }
      // A live leg's quality comes from the node carrying it; an ended leg's was stored when it ended.
      const live = s.call && deps.liveCallQuality ? deps.liveCallQuality(s.id, s.call.id) : null;
      return presentSession(s, s.call && live ? { ...s.call, quality: live as Record<string, unknown> } : s.call, stream);
    },
  );

  app.post(
    '/v1/sessions/:id/end',
    {
      config: { scope: 'sessions:write' },
      schema: {
        tags: ['sessions'],
        summary: 'End a session',
        description: 'Scope sessions:write. Idempotent: an ended session returns its existing summary. Calls are disconnected, billing stops.',
        params: IdParams,
        response: { 200: SessionEnded, ...withAuthErrors({ 404: ['session_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const ended = await endSession({ db: deps.db, redis: deps.redis, redisKeyPrefix: deps.config.redisKeyPrefix }, id, 'api_request', authOf(req).orgId);
      if (!ended) throw notFound(id);
      return presentEndedSession(ended.row);
    },
  );

  app.get(
    '/v1/sessions/:id/transcript',
    {
      config: { scope: 'sessions:read' },
      schema: {
        tags: ['sessions'],
        summary: "Retrieve a session's transcript",
        description: 'Scope sessions:read. in_progress while the session is open, completed once it ended.',
        params: IdParams,
        response: { 200: TranscriptObject, ...withAuthErrors({ 404: ['session_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const [s, turns] = await Promise.all([getSessionWithCall(deps.db, id, authOf(req).orgId), listTranscriptTurns(deps.db, id)]);
      if (!s) throw notFound(id);
      return presentTranscript(s, turns);
    },
  );

  app.get(
    '/v1/sessions/:id/recordings',
    {
      config: { scope: 'recordings:read' },
      schema: {
        tags: ['recordings'],
        summary: "List a session's recordings",
        description: 'Scope recordings:read. Ascending creation order; empty until recordings exist (after the session ends).',
        params: IdParams,
        querystring: PageQuery,
        response: { 200: ListOf(RecordingListItem, 'Recordings of the session.'), ...withAuthErrors({ 400: ['invalid_request'], 404: ['session_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const page = pageRequest(req.query);
      const s = await getSessionWithCall(deps.db, id, authOf(req).orgId);
      if (!s) throw notFound(id);
      const result = await listSessionRecordings(deps.db, s.id, page);
      return presentList(`/v1/sessions/${s.id}/recordings`, result, presentRecordingItem);
    },
  );
}
