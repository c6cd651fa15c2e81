// Post-call analysis (SPEC "POST /v1/sessions/{id}/analysis", "GET /v1/analyses/{id}").
// Gates in SPEC order: scope and organization (auth plugin), session ownership (404), transcript
// available (400), then credits: 1 credit is taken in the same transaction that creates the
// analysis (402 when none is left, race-safe); Idempotency-Key replays the 202 without a charge.
import { Type, type Static } from '@sinclair/typebox';
import { ANALYSIS_PARTS, PROFILE_NAMES } from '../../analysis/index.js';
import { countSpokenTurns, createChargedAnalysis, getAnalysis, getSessionWithCall, type AnalysisRow } from '../../store/index.js';
import { ApiError } from '../errors.js';
import { authOf, type ApiApp, type ApiDeps } from '../context.js';
import { setCreditHeaders } from '../plugins/auth.js';
import { stored } from './present.js';
import { IdParams, Iso8601, NullableIso8601, withAuthErrors } from '../schemas/common.js';

const AnalysisBody = Type.Object(
  {
    // Plain enums, so a refused value is reported with every allowed one.
    profile: Type.Optional(
      Type.Unsafe<string>({
        type: 'string',
        enum: PROFILE_NAMES,
        description: `One of ${PROFILE_NAMES.join(', ')}; default 'default'. See README "Analysis".`,
      }),
    ),
    include: Type.Optional(
      Type.Array(Type.Unsafe<string>({ type: 'string', enum: [...ANALYSIS_PARTS] }), {
        uniqueItems: true,
        minItems: 1,
        description: `Parts to compute, any of ${ANALYSIS_PARTS.join(', ')}; default all.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const AnalysisCreated = Type.Object({ id: Type.String(), object: Type.Literal('analysis'), session_id: Type.String(), status: Type.Literal('processing') });

const Nullable = <T extends ReturnType<typeof Type.Object>>(t: T) => Type.Union([t, Type.Null()]);
const AnalysisObject = Type.Object({
  id: Type.String({ description: 'anl_…' }),
  object: Type.Literal('analysis'),
  session_id: Type.String(),
  call_id: Type.Union([Type.String(), Type.Null()]),
  profile: Type.String(),
  status: Type.String({ description: 'processing, completed or failed.' }),
  summary: Type.Union([Type.String(), Type.Null()]),
  sentiment: Nullable(Type.Object({ customer: Type.String(), agent: Type.String() })),
  compliance: Nullable(Type.Object({ status: Type.String(), flags: Type.Array(Type.Object({}, { additionalProperties: true })) })),
  performance: Nullable(Type.Object({ score: Type.Number() })),
  keywords: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Extension: set when include has keywords.' }),
  action_items: Type.Union([Type.Array(Type.Object({ description: Type.String(), assignee: Type.String(), priority: Type.String() })), Type.Null()], {
    description: 'Extension: commitments and requests found in the call (also in analysis.completed).',
  }),
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: Iso8601('Creation time.'),
  completed_at: NullableIso8601('When it completed.'),
});

type Analysis = Static<typeof AnalysisObject>;

function presentAnalysis(a: AnalysisRow): Analysis {
  const done = a.status === 'completed';
  return {
    id: a.id,
    object: 'analysis',
    session_id: a.session_id,
    call_id: a.call_id,
    profile: a.profile,
    status: a.status,
    summary: done ? a.summary : null,
    sentiment: done ? stored<Analysis['sentiment']>(a.sentiment) : null,
    compliance: done ? stored<Analysis['compliance']>(a.compliance) : null,
    performance: done ? stored<Analysis['performance']>(a.performance) : null,
    keywords: done ? a.keywords : null,
    action_items: done ? stored<Analysis['action_items']>(a.details?.action_items ?? []) : null,
    error: a.status === 'failed' ? a.error : null,
    created_at: a.created_at.toISOString(),
    completed_at: a.completed_at ? a.completed_at.toISOString() : null,
  };
}

export default async function analysisRoutes(app: ApiApp, deps: ApiDeps): Promise<void> {
  app.post(
    '/v1/sessions/:id/analysis',
    {
      config: { scope: 'analysis:write', idempotent: true },
      schema: {
        tags: ['analyses'],
        summary: 'Request a post-call analysis',
        description:
          'Scope analysis:write. Needs an ended session with a transcript; consumes 1 API credit. Honours Idempotency-Key (a replay is not charged again). Poll GET /v1/analyses/{id}.',
        params: IdParams,
        body: Type.Optional(AnalysisBody),
        response: {
          202: AnalysisCreated,
          ...withAuthErrors({ 400: ['transcript_not_available', 'validation_error'], 402: ['insufficient_api_credits'], 404: ['session_not_found'] }),
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const body = req.body ?? {};
      const auth = authOf(req);
      const s = await getSessionWithCall(deps.db, id, auth.orgId);
      if (!s) throw new ApiError('session_not_found', { param: 'session_id', message: `No session '${id}' in this organization.` });
      if (s.status !== 'ended') {
        throw new ApiError('transcript_not_available', { message: 'The transcript is available once the session has ended.' });
      }
      if ((await countSpokenTurns(deps.db, id)) === 0)
        throw new ApiError('transcript_not_available', { message: 'The session ended without any transcribed speech.' });
      const created = await createChargedAnalysis(deps.db, {
        orgId: auth.orgId,
        sessionId: id,
        profile: body.profile ?? 'default',
        include: body.include ?? [...ANALYSIS_PARTS],
        requestId: String(req.id),
      });
      if (!created.ok) {
        // The balance read at auth time may be stale by now: report the real one.
        setCreditHeaders(reply, { credits: 0, credits_used: auth.org.credits_used });
        throw new ApiError('insufficient_api_credits');
      }
      setCreditHeaders(reply, { credits: created.credits, credits_used: created.creditsUsed });
      reply.code(202);
      return { id: created.analysis.id, object: 'analysis' as const, session_id: id, status: 'processing' as const };
    },
  );

  app.get(
    '/v1/analyses/:id',
    {
      config: { scope: 'analysis:read' },
      schema: {
        tags: ['analyses'],
        summary: 'Retrieve an analysis',
        description: 'Scope analysis:read. Any status; poll until completed or failed.',
        params: IdParams,
        response: { 200: AnalysisObject, ...withAuthErrors({ 404: ['analysis_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const a = await getAnalysis(deps.db, authOf(req).orgId, id);
      if (!a) throw new ApiError('analysis_not_found', { param: 'analysis_id', message: `No analysis '${id}'.` });
      return presentAnalysis(a);
    },
  );
}
