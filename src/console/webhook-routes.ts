// The webhook delivery log's extras that /v1 does not have: one attempt in full (what was sent and
// what the receiver answered, bounded) and replaying a finished delivery. Developers and owners
// only (viewers have no webhooks:manage); the replay is a state change, so it needs the CSRF token.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../api/index.js';
import { getAttemptDetail, replayDelivery } from '../store/index.js';
import { envelopeBody } from '../webhooks/index.js';
import { requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

const tags = ['console'];

export default async function consoleWebhookRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db } = deps;

  async function manager(req: FastifyRequest): Promise<string> {
    const { signIn } = await requireSignIn(store, req);
    if (!signIn.orgId || (signIn.role !== 'owner' && signIn.role !== 'developer')) {
      throw new ApiError('insufficient_permissions', { message: 'Only owners and developers manage webhooks.' });
    }
    return signIn.orgId;
  }

  app.get<{ Params: { id: string } }>('/console/api/webhook_attempts/:id', { schema: { tags } }, async (req) => {
    const orgId = await manager(req);
    const a = await getAttemptDetail(db, orgId, req.params.id);
    if (!a) throw new ApiError('webhook_endpoint_not_found', { param: 'attempt_id', message: 'No such delivery attempt in this organization.' });
    return {
      object: 'webhook_delivery_attempt',
      id: a.id,
      endpoint_id: a.endpoint_id,
      event_id: a.event_id,
      event_type: a.event_type,
      attempt: a.attempt,
      outcome: a.outcome,
      delivery_status: a.delivery_status,
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
      attempted_at: a.attempted_at.toISOString(),
      next_retry_at: a.next_retry_at?.toISOString() ?? null,
      // The body that was signed and sent: the event's envelope, built as the worker builds it.
      request_body: envelopeBody({
        event_id: a.event_id,
        event_type: a.event_type,
        api_version: a.api_version,
        event_created_at: a.event_created_at,
        data: a.event_data,
      }),
      response_headers: a.response_headers,
      response_body: a.response_body,
    };
  });

  app.post<{ Params: { id: string; eventId: string } }>(
    '/console/api/webhook_endpoints/:id/deliveries/:eventId/replay',
    { schema: { tags } },
    async (req, reply) => {
      const orgId = await manager(req);
      const result = await replayDelivery(db, orgId, req.params.id, req.params.eventId);
      if (result === 'not_found')
        throw new ApiError('webhook_endpoint_not_found', { param: 'event_id', message: 'No delivery of this event to this endpoint in this organization.' });
      reply.code(202);
      return { object: 'webhook_delivery', endpoint_id: req.params.id, event_id: req.params.eventId, status: 'pending', replayed: result === 'queued' };
    },
  );
}
