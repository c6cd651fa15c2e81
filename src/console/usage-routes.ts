// GET /console/api/usage: the overview's usage over time for the signed-in user's organization —
// sessions, billed minutes and analyses per UTC day, credits taken and added per day, live sessions
// now and the most recent errors — aggregated by PostgreSQL in one statement (migration 017's
// indexes, and sessions(org_id, id) scanned by an id range since ids are time-ordered).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../api/index.js';
import { idFloor } from '../ids.js';
import { requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

/** Session end reasons that mean something went wrong (the client's own end, a hang-up or the agent's end are normal). */
export const ERROR_END_REASONS = ['node_lost', 'node_shutdown', 'stream_disconnected', 'inactivity'] as const;
const DAY_MS = 86_400_000;

const UsageQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 14, description: 'UTC days to cover, today included.' })) },
  { additionalProperties: false },
);

const UsageDay = Type.Object({
  date: Type.String({ description: 'UTC day, YYYY-MM-DD.' }),
  sessions: Type.Integer({ description: 'Sessions created that day.' }),
  minutes: Type.Number({ description: 'Billed minutes of those sessions (ended ones).' }),
  failed_sessions: Type.Integer({ description: 'Of those, sessions that ended in error.' }),
  analyses: Type.Integer(),
  failed_analyses: Type.Integer(),
  credits_used: Type.Integer(),
  credits_added: Type.Integer(),
});

const UsageError = Type.Object({
  kind: Type.Union([Type.Literal('session'), Type.Literal('analysis'), Type.Literal('recording'), Type.Literal('webhook_delivery')]),
  id: Type.String(),
  session_id: Type.Union([Type.String(), Type.Null()]),
  message: Type.String(),
  at: Type.String({ description: 'ISO 8601.' }),
});

const Usage = Type.Object({
  object: Type.Literal('usage'),
  days: Type.Integer(),
  from: Type.String({ description: 'First UTC day covered, YYYY-MM-DD.' }),
  credits: Type.Integer({ description: 'Credits remaining.' }),
  credits_used: Type.Integer({ description: 'Credits used in all.' }),
  live_sessions: Type.Integer({ description: 'Sessions created or active now.' }),
  series: Type.Array(UsageDay, { description: 'One entry per day, oldest first; days without activity are zeros.' }),
  errors: Type.Array(UsageError, { description: 'The 10 most recent errors in the window, newest first.' }),
});
export type UsageT = Static<typeof Usage>;

const USAGE_SQL = `
WITH d AS (
  SELECT generate_series(($2::timestamptz AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date, interval '1 day')::date AS day
), s AS (
  SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n, coalesce(sum(duration_seconds), 0) AS seconds,
         count(*) FILTER (WHERE end_reason = ANY($5::text[])) AS failed
    FROM sessions WHERE org_id = $1 AND id >= $3 AND created_at >= $2::timestamptz GROUP BY 1
), a AS (
  SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n, count(*) FILTER (WHERE status = 'failed') AS failed
    FROM analyses WHERE org_id = $1 AND id >= $4 AND created_at >= $2::timestamptz GROUP BY 1
), c AS (
  SELECT (created_at AT TIME ZONE 'UTC')::date AS day,
         coalesce(-sum(delta) FILTER (WHERE delta < 0), 0) AS used, coalesce(sum(delta) FILTER (WHERE delta > 0), 0) AS added
    FROM credit_ledger WHERE org_id = $1 AND created_at >= $2::timestamptz GROUP BY 1
), e AS (
  (SELECT 'session' AS kind, id, id AS session_id, 'Session ended: ' || end_reason AS message, coalesce(ended_at, created_at) AS at
     FROM sessions WHERE org_id = $1 AND id >= $3 AND end_reason = ANY($5::text[]) ORDER BY id DESC LIMIT 10)
  UNION ALL
  (SELECT 'analysis', id, session_id, 'Analysis failed: ' || coalesce(error, 'no reason recorded'), coalesce(completed_at, created_at)
     FROM analyses WHERE org_id = $1 AND id >= $4 AND status = 'failed' ORDER BY id DESC LIMIT 10)
  UNION ALL
  (SELECT 'recording', id, session_id, 'Recording (' || channel || ') failed: ' || coalesce(error, message, 'no reason recorded'), created_at
     FROM recordings WHERE org_id = $1 AND id >= $6 AND status = 'failed' ORDER BY id DESC LIMIT 10)
  UNION ALL
  (SELECT 'webhook_delivery', event_id, ordering_key,
          'Webhook ' || event_type || ' to ' || endpoint_id || ' failed after ' || attempts || ' attempts: '
            || coalesce(last_error, 'HTTP ' || last_status_code, 'no answer'), finished_at
     FROM webhook_deliveries WHERE org_id = $1 AND status = 'failed' AND finished_at >= $2::timestamptz ORDER BY finished_at DESC LIMIT 10)
)
SELECT o.credits, o.credits_used, o.open_sessions,
       (SELECT json_agg(json_build_object(
                 'date', to_char(d.day, 'YYYY-MM-DD'), 'sessions', coalesce(s.n, 0), 'seconds', coalesce(s.seconds, 0),
                 'failed_sessions', coalesce(s.failed, 0), 'analyses', coalesce(a.n, 0), 'failed_analyses', coalesce(a.failed, 0),
                 'credits_used', coalesce(c.used, 0), 'credits_added', coalesce(c.added, 0)) ORDER BY d.day)
          FROM d LEFT JOIN s USING (day) LEFT JOIN a USING (day) LEFT JOIN c USING (day)) AS series,
       (SELECT coalesce(json_agg(x ORDER BY x.at DESC), '[]') FROM (SELECT * FROM e ORDER BY at DESC LIMIT 10) x) AS errors
  FROM organizations o WHERE o.id = $1`;

interface Row {
  credits: string;
  credits_used: string;
  open_sessions: number;
  series: Array<Omit<Static<typeof UsageDay>, 'minutes'> & { seconds: number }>;
  errors: Array<Static<typeof UsageError>>;
}

/** Midnight UTC `days - 1` days before today. */
export function windowStart(days: number, now = Date.now()): number {
  return Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
}

/** The one statement behind the overview (exported for the benchmark's EXPLAIN). */
export function usageQuery(orgId: string, start: number): { text: string; values: unknown[] } {
  return {
    text: USAGE_SQL,
    values: [orgId, new Date(start).toISOString(), idFloor('sess', start), idFloor('anl', start), [...ERROR_END_REASONS], idFloor('rec', start)],
  };
}

export async function orgUsage(db: ConsoleDeps['db'], orgId: string, days: number): Promise<UsageT | null> {
  const start = windowStart(days);
  const q = usageQuery(orgId, start);
  const { rows } = await db.query<Row>(q.text, q.values);
  const row = rows[0];
  if (!row) return null;
  return {
    object: 'usage',
    days,
    from: new Date(start).toISOString().slice(0, 10),
    credits: Number(row.credits),
    credits_used: Number(row.credits_used),
    live_sessions: row.open_sessions,
    series: row.series.map(({ seconds, ...d }) => ({
      ...d,
      sessions: Number(d.sessions),
      minutes: Math.round((Number(seconds) / 60) * 10) / 10,
      failed_sessions: Number(d.failed_sessions),
      analyses: Number(d.analyses),
      failed_analyses: Number(d.failed_analyses),
      credits_used: Number(d.credits_used),
      credits_added: Number(d.credits_added),
    })),
    errors: row.errors.map((e) => ({ ...e, at: new Date(e.at).toISOString() })),
  };
}

const tags = ['console'];

export default async function consoleUsageRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db } = deps;
  const orgOf = new WeakMap<FastifyRequest, string>();
  app.get(
    '/console/api/usage',
    {
      schema: { tags, summary: "The organization's usage per day, live sessions and recent errors", querystring: UsageQuery, response: { 200: Usage } },
      // Signed in before the query is validated, so a stranger learns nothing from a 400 (as on /v1).
      onRequest: async (req) => {
        const { signIn } = await requireSignIn(store, req);
        if (!signIn.orgId) throw new ApiError('insufficient_permissions', { message: 'Operators see organizations through the operator view.' });
        orgOf.set(req, signIn.orgId);
      },
    },
    async (req) => {
      const { days = 14 } = req.query as Static<typeof UsageQuery>;
      const usage = await orgUsage(db, orgOf.get(req) as string, days);
      if (!usage) throw new ApiError('sign_in_required');
      return usage;
    },
  );
}
