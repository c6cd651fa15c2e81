import type { AttemptRow } from '../store/index.js';

/** One row of GET /v1/webhook_endpoints/{id}/deliveries (the attempt log; schema DeliveryAttemptObject). */
export interface DeliveryAttemptObject extends Omit<AttemptRow, 'attempted_at' | 'next_retry_at'> {
  object: 'webhook_delivery_attempt';
  attempted_at: string;
  next_retry_at: string | null;
}

export function presentAttempt(a: AttemptRow): DeliveryAttemptObject {
  return {
    id: a.id,
    object: 'webhook_delivery_attempt',
    event_id: a.event_id,
    event_type: a.event_type,
    attempt: a.attempt,
    outcome: a.outcome,
    status_code: a.status_code,
    error: a.error,
    duration_ms: a.duration_ms,
    attempted_at: a.attempted_at.toISOString(),
    next_retry_at: a.next_retry_at?.toISOString() ?? null,
  };
}
