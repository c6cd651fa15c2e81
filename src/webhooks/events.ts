// Event types and subscription categories (SPEC "Event types and `data`"). An endpoint subscribes to
// types, category names or '*'; the subscription is expanded once, at write time, into event types.
// `transcript.segment` goes only to endpoints with `realtime: true` (SPEC "Webhook delivery" 5).

export const EVENT_TYPES = [
  'session.created',
  'session.started',
  'session.ended',
  'session.provider.connected',
  'session.provider.disconnected',
  'transcript.ready',
  'transcript.segment',
  'recording.ready',
  'recording.failed',
  'analysis.completed',
  'analysis.failed',
  'ai_agent.tool_called',
  'ai_agent.escalation_requested',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Sent only by POST /v1/webhook_endpoints/{id}/test, to that endpoint, whatever it subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const REALTIME_EVENT_TYPE: EventType = 'transcript.segment';

export const EVENT_CATEGORIES: Record<string, readonly EventType[]> = {
  sessions: ['session.created', 'session.started', 'session.ended'],
  provider: ['session.provider.connected', 'session.provider.disconnected'],
  transcripts: ['transcript.ready', 'transcript.segment'],
  recordings: ['recording.ready', 'recording.failed'],
  analysis: ['analysis.completed', 'analysis.failed'],
  ai_agent: ['ai_agent.tool_called', 'ai_agent.escalation_requested'],
};

/** SPEC writes the analysis event both ways; the subscription accepts both and stores the reference name. */
const ALIASES: Record<string, EventType> = { 'analysis.complete': 'analysis.completed' };

export class SubscriptionError extends Error {}

/**
 * Normalises a subscription: returns what to store as `events` (as given, aliases resolved, no
 * duplicates) and `eventTypes` (expanded; ['*'] for everything). Throws SubscriptionError on an
 * unknown name or on `transcript.segment` without realtime.
 */
export function expandSubscription(events: readonly string[], realtime: boolean): { events: string[]; eventTypes: string[] } {
  const given: string[] = [];
  const types = new Set<string>();
  for (const raw of events) {
    const name: string = ALIASES[raw] ?? raw;
    if (given.includes(name)) continue;
    given.push(name);
    if (name === '*') types.add('*');
    else if (EVENT_CATEGORIES[name]) for (const t of EVENT_CATEGORIES[name]) types.add(t);
    else if ((EVENT_TYPES as readonly string[]).includes(name)) types.add(name);
    else
      throw new SubscriptionError(`unknown event type or category '${raw}'; use event types, categories (${Object.keys(EVENT_CATEGORIES).join(', ')}) or '*'`);
  }
  if (given.includes(REALTIME_EVENT_TYPE) && !realtime) {
    throw new SubscriptionError(`'${REALTIME_EVENT_TYPE}' is delivered only to realtime endpoints: set realtime to true`);
  }
  const eventTypes = types.has('*') ? ['*'] : [...types];
  return { events: given, eventTypes };
}

/** Whether an event of `type` goes to an endpoint with this expanded subscription (mirrors the fan-out SQL). */
export function isSubscribed(eventTypes: readonly string[], realtime: boolean, type: string): boolean {
  if (type === REALTIME_EVENT_TYPE) return realtime;
  return eventTypes.includes('*') || eventTypes.includes(type);
}
