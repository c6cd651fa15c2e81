// The operator view's data (gateway-wide, operators only): every node from its heartbeat record,
// live calls across the gateway with each leg's quality (live from the node carrying it, stored once
// ended), organizations, and the SIP capture (operator-sip-routes.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../api/index.js';
import { countLiveSessions, listOperatorCalls, listOperatorOrgs, updateOrg } from '../store/index.js';
import { listNodes, liveLegsOf } from '../coord/index.js';
import { requireOperator } from './operator-guard.js';
import operatorSipRoutes from './operator-sip-routes.js';
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
  const { store, db, config, redis } = deps;
  const operator = (req: FastifyRequest): Promise<void> => requireOperator(store, req);

  // Every node that beat lately (coord/node-heartbeat.ts): live, stale (missed a beat) or lost
  // (record expired: stopped without a clean shutdown). A node shut down cleanly is not listed.
  app.get('/console/api/operator/nodes', { schema: { tags } }, async (req) => {
    await operator(req);
    const [nodes, live] = await Promise.all([listNodes(redis), countLiveSessions(db)]);
    return {
      object: 'list',
      data: nodes.map((n) => ({ ...n, answering: n.id === config.nodeId })),
      live_sessions_gateway: live,
    };
  });

  app.get<{ Querystring: Static<typeof CallSearch> }>('/console/api/operator/calls', { schema: { tags, querystring: CallSearch } }, async (req) => {
    await operator(req);
    const q = req.query.q?.trim();
    // Each row's call is the stored row: an ended leg's final quality is in it.
    const rows = await listOperatorCalls(db, q || null);
    // A live leg's quality so far is published by the node carrying it with its heartbeat.
    const carriers = async () => (await listNodes(redis)).filter((n) => n.state !== 'lost').map((n) => n.id);
    const legs: Awaited<ReturnType<typeof liveLegsOf>> = rows.some((r) => r.call.ended_at === null) ? await liveLegsOf(redis, await carriers()) : new Map();
    return {
      object: 'list',
      data: rows.map((r) => {
        const live = r.call.ended_at === null ? legs.get(r.call.id) : undefined;
        return {
          ...r.call,
          quality: live ? live.quality : r.call.quality,
          quality_live: Boolean(live),
          node: live?.node ?? null,
          session_mode: r.mode,
          session_status: r.session_status,
        };
      }),
    };
  });

  app.get('/console/api/operator/organizations', { schema: { tags } }, async (req) => {
    await operator(req);
    return { object: 'list', data: await listOperatorOrgs(db) };
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

  await app.register(operatorSipRoutes, deps);
}
