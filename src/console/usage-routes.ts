// GET /console/api/usage: the overview's usage over time for the signed-in user's organization —
// sessions, billed minutes and analyses per UTC day, credits taken and added per day, live sessions
// now and the most recent errors — aggregated by PostgreSQL in one statement (store/console-repo.ts:
// readOrgUsage).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../api/index.js';
import { readOrgUsage } from '../store/index.js';
import { requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

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

/** Midnight UTC `days - 1` days before today. */
export function windowStart(days: number, now = Date.now()): number {
  return Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
}

export async function orgUsage(db: ConsoleDeps['db'], orgId: string, days: number): Promise<UsageT | null> {
  const start = windowStart(days);
  const row = await readOrgUsage(db, orgId, start);
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
