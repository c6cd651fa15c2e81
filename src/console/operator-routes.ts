// The operator view's data (gateway-wide, operators only): this node's health, live calls across
// the gateway with whatever per-leg quality the telephony plane stores, and organizations.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import os from 'node:os';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../api/index.js';
import { updateOrg } from '../store/index.js';
import { requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

const OrgChangeBody = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('inactive')])),
    credits: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
const CallSearch = Type.Object({ q: Type.Optional(Type.String({ maxLength: 200 })) });

const tags = ['console'];

export default async function operatorRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db, config } = deps;
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  app.addHook('onClose', async () => loopDelay.disable());

  async function operator(req: FastifyRequest): Promise<void> {
    const { signIn } = await requireSignIn(store, req);
    if (signIn.role !== 'operator') throw new ApiError('operator_only');
  }

  app.get('/console/api/operator/nodes', { schema: { tags } }, async (req) => {
    await operator(req);
    const { rows } = await db.query<{ live: string }>(`SELECT count(*) AS live FROM sessions WHERE status <> 'ended'`);
    const node = {
      id: config.nodeId,
      roles: config.roles,
      health: 'ok',
      uptime_seconds: Math.round(process.uptime()),
      live_sessions_here: deps.liveSessionCount?.() ?? null,
      event_loop_delay_ms: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
      load_average: os.loadavg(),
      rss_bytes: process.memoryUsage().rss,
    };
    // Only this node reports itself: nodes publish no heartbeat record for the others yet.
    return { object: 'list', data: [node], live_sessions_gateway: Number(rows[0]?.live ?? 0) };
  });

  app.get<{ Querystring: Static<typeof CallSearch> }>('/console/api/operator/calls', { schema: { tags, querystring: CallSearch } }, async (req) => {
    await operator(req);
    const q = req.query.q?.trim();
    // to_jsonb(c.*) carries whatever the calls table holds (per-leg RTCP quality where stored).
    const { rows } = await db.query(
      `SELECT to_jsonb(c.*) AS call, s.mode, s.status AS session_status
         FROM calls c JOIN sessions s ON s.id = c.session_id
        WHERE ($1::text IS NULL AND c.ended_at IS NULL)
           OR ($1::text IS NOT NULL AND (c.call_sid = $1 OR c.session_id = $1 OR c.from_uri ILIKE '%' || $1 || '%' OR c.to_uri ILIKE '%' || $1 || '%'))
        ORDER BY c.created_at DESC LIMIT 100`,
      [q || null],
    );
    return { object: 'list', data: rows.map((r) => ({ ...r.call, session_mode: r.mode, session_status: r.session_status })) };
  });

  app.get('/console/api/operator/organizations', { schema: { tags } }, async (req) => {
    await operator(req);
    const { rows } = await db.query(
      `SELECT o.id, o.name, o.status, o.credits, o.credits_used, o.max_concurrent_sessions, o.rate_limit, o.features,
              (SELECT count(*)::int FROM sessions s WHERE s.org_id = o.id AND s.status <> 'ended') AS live_sessions
         FROM organizations o ORDER BY o.id`,
    );
    return { object: 'list', data: rows };
  });

  app.post<{ Params: { id: string }; Body: Static<typeof OrgChangeBody> }>(
    '/console/api/operator/organizations/:id',
    { schema: { tags, body: OrgChangeBody } },
    async (req) => {
      await operator(req);
      const org = await updateOrg(db, req.params.id, req.body);
      if (!org) throw new ApiError('organization_not_found');
      return org;
    },
  );
}
