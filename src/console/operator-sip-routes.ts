// The operator view's SIP capture: captured calls found by Call-ID, number or session, and one
// call's messages in capture order for the ladder diagram (the same rows as `voxbridge admin calls trace`).
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { getSipTrace, getSipTraceCall, searchSipCalls } from '../store/index.js';
import { requireOperator } from './operator-guard.js';
import type { ConsoleDeps } from './context.js';

const Search = Type.Object({ q: Type.Optional(Type.String({ maxLength: 300 })) });
const CallIdParams = Type.Object({ callId: Type.String({ minLength: 1, maxLength: 300 }) });
const tags = ['console'];

/** One free-text box: a session id, a phone number (digits, optional +) or else a Call-ID. */
function searchOf(q: string | undefined): Parameters<typeof searchSipCalls>[1] {
  const text = q?.trim();
  if (!text) return {};
  if (/^sess_[0-9a-z]+$/.test(text)) return { sessionId: text };
  if (/^\+?\d{3,20}$/.test(text)) return { number: text };
  return { callId: text };
}

export default async function operatorSipRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db } = deps;

  app.get<{ Querystring: Static<typeof Search> }>('/console/api/operator/sip_calls', { schema: { tags, querystring: Search } }, async (req) => {
    await requireOperator(store, req);
    const found = await searchSipCalls(db, { ...searchOf(req.query.q), limit: 50 });
    return { object: 'list', data: found, capture_enabled: deps.config.sipCapture.enabled, retention_hours: deps.config.sipCapture.retentionHours };
  });

  app.get<{ Params: Static<typeof CallIdParams> }>('/console/api/operator/sip_calls/:callId', { schema: { tags, params: CallIdParams } }, async (req) => {
    await requireOperator(store, req);
    const { callId } = req.params;
    const [messages, call] = await Promise.all([getSipTrace(db, callId), getSipTraceCall(db, callId)]);
    // An empty list is an answer too: capture off on the node that carried it, or past retention.
    return {
      call_id: callId,
      call,
      messages,
      capture_enabled: deps.config.sipCapture.enabled,
      retention_hours: deps.config.sipCapture.retentionHours,
    };
  });
}
