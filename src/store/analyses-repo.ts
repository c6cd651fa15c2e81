// Analyses (SPEC "Analysis object"): created together with their 1-credit charge, claimed by the
// analysis job with a lease, finished with their outbox event in the same transaction.
import { newId } from '../ids.js';
import { withTransaction, type Db } from './db.js';
import { insertEvent } from './outbox.js';

export interface AnalysisRow {
  id: string;
  session_id: string;
  org_id: string;
  call_id: string | null;
  profile: string;
  include: string[];
  status: 'processing' | 'completed' | 'failed';
  summary: string | null;
  sentiment: Record<string, unknown> | null;
  compliance: Record<string, unknown> | null;
  keywords: string[] | null;
  performance: Record<string, unknown> | null;
  details: Record<string, unknown> | null;
  error: string | null;
  attempts: number;
  created_at: Date;
  completed_at: Date | null;
}

export type ChargedAnalysis = { ok: true; analysis: AnalysisRow; credits: number; creditsUsed: number } | { ok: false; reason: 'insufficient_credits' };

/**
 * Takes 1 credit and creates the analysis in one transaction: the conditional decrement
 * (credits > 0) serialises concurrent requests on the organization row, so against a balance of 1
 * exactly one wins; a failed insert rolls the charge back.
 */
export async function createChargedAnalysis(
  db: Db,
  input: { orgId: string; sessionId: string; profile: string; include: string[]; requestId: string },
): Promise<ChargedAnalysis> {
  return withTransaction(db, async (client) => {
    const { rows: org } = await client.query<{ credits: number; credits_used: number }>(
      `UPDATE organizations SET credits = credits - 1, credits_used = credits_used + 1, updated_at = now()
        WHERE id = $1 AND credits > 0 RETURNING credits, credits_used`,
      [input.orgId],
    );
    const charged = org[0];
    if (!charged) return { ok: false, reason: 'insufficient_credits' } as const;
    const { rows: calls } = await client.query<{ id: string }>('SELECT id FROM calls WHERE session_id = $1 ORDER BY created_at LIMIT 1', [input.sessionId]);
    const { rows } = await client.query<AnalysisRow>(
      `INSERT INTO analyses (id, session_id, org_id, call_id, profile, include) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [newId('anl'), input.sessionId, input.orgId, calls[0]?.id ?? null, input.profile, input.include],
    );
    const analysis = rows[0];
    if (!analysis) throw new Error('INSERT analyses … RETURNING gave no row');
    await client.query(`INSERT INTO credit_ledger (org_id, delta, reason, request_id) VALUES ($1, -1, $2, $3)`, [
      input.orgId,
      `analysis ${analysis.id}`,
      input.requestId,
    ]);
    return { ok: true, analysis, credits: charged.credits, creditsUsed: charged.credits_used } as const;
  });
}

export async function getAnalysis(db: Db, orgId: string, id: string): Promise<AnalysisRow | null> {
  const { rows } = await db.query<AnalysisRow>('SELECT * FROM analyses WHERE id = $1 AND org_id = $2', [id, orgId]);
  return rows[0] ?? null;
}

export async function claimAnalyses(db: Db, leaseSeconds: number, limit: number): Promise<AnalysisRow[]> {
  const { rows } = await db.query<AnalysisRow>(
    `UPDATE analyses a SET lease_until = now() + make_interval(secs => $1), attempts = a.attempts + 1
      WHERE a.id IN (SELECT id FROM analyses WHERE status = 'processing' AND (lease_until IS NULL OR lease_until < now())
                      ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING a.*`,
    [leaseSeconds, limit],
  );
  return rows;
}

export interface AnalysisOutcome {
  summary: string | null;
  sentiment: Record<string, unknown> | null;
  compliance: Record<string, unknown> | null;
  keywords: string[] | null;
  performance: Record<string, unknown> | null;
  details: Record<string, unknown>;
  /** `results` of analysis.completed (SPEC "Event types"). */
  eventResults: Record<string, unknown>;
}

export async function completeAnalysis(db: Db, id: string, o: AnalysisOutcome): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const { rows } = await client.query<AnalysisRow>(
      `UPDATE analyses SET status = 'completed', summary = $2, sentiment = $3, compliance = $4, keywords = $5, performance = $6, details = $7,
              completed_at = now(), lease_until = NULL
        WHERE id = $1 AND status = 'processing' RETURNING *`,
      [id, o.summary, o.sentiment, o.compliance, o.keywords === null ? null : JSON.stringify(o.keywords), o.performance, o.details],
    );
    const a = rows[0];
    if (!a) return false;
    await insertEvent(client, a.org_id, 'analysis.completed', {
      id: a.id,
      object: 'analysis',
      session_id: a.session_id,
      status: 'completed',
      results: o.eventResults,
    });
    return true;
  });
}

export async function failAnalysis(db: Db, id: string, message: string): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const { rows } = await client.query<AnalysisRow>(
      `UPDATE analyses SET status = 'failed', error = $2, lease_until = NULL WHERE id = $1 AND status = 'processing' RETURNING *`,
      [id, message],
    );
    const a = rows[0];
    if (!a) return false;
    await insertEvent(client, a.org_id, 'analysis.failed', { id: a.id, session_id: a.session_id, error: { code: 'analysis_failed', message } });
    return true;
  });
}

/** Turns with timing, for the analyser. */
export async function analysisTurns(
  db: Db,
  sessionId: string,
): Promise<
  Array<{
    sequence: number;
    speaker: string;
    language: string | null;
    text: string;
    translation: { language: string; text: string } | null;
    start_time: number | null;
    end_time: number | null;
  }>
> {
  const { rows } = await db.query(
    `SELECT sequence, speaker, language, text, translation, start_time, end_time FROM transcript_turns
      WHERE session_id = $1 AND trim(text) <> '' ORDER BY sequence`,
    [sessionId],
  );
  return rows;
}

export async function complianceRules(db: Db, orgId: string): Promise<Record<string, unknown>> {
  const { rows } = await db.query<{ compliance_rules: Record<string, unknown> }>('SELECT compliance_rules FROM organizations WHERE id = $1', [orgId]);
  return rows[0]?.compliance_rules ?? {};
}

/** Turns with any text: an analysis needs at least one. */
export async function countSpokenTurns(db: Db, sessionId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transcript_turns WHERE session_id = $1 AND trim(text) <> ''`, [sessionId]);
  return rows[0]?.n ?? 0;
}

/** Gives a failed attempt's row back to the queue at once (its next claim retries it). */
export async function releaseAnalysisLease(db: Db, id: string): Promise<void> {
  await db.query('UPDATE analyses SET lease_until = NULL WHERE id = $1', [id]);
}
