// Post-call analysis against real PostgreSQL and Redis (SPEC "POST /v1/sessions/{id}/analysis",
// "GET /v1/analyses/{id}", "Analysis object", analysis.completed): gates in order, the 1-credit
// charge (idempotent, race-safe), and the embedded analyser on a known transcript.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { pollUntil } from '../helpers/recordings.js';
import { defined } from '../helpers/defined.js';

let gw: TestGateway;
let org: TestOrg;
beforeAll(async () => {
  gw = await startTestGateway({ postCall: { jobIntervalMs: 200, leaseSeconds: 30, captureGraceSeconds: 5, retentionIntervalMs: 600_000, mp3BitrateKbps: 16 } });
  org = await gw.createOrg();
  await gw.db.query('UPDATE organizations SET compliance_rules = $2 WHERE id = $1', [
    org.orgId,
    {
      required_disclosures: ['this call is recorded'],
      forbidden_phrases: ['guaranteed refund'],
    },
  ]);
});
afterAll(async () => {
  await gw?.stop();
});

type Turn = [speaker: 'agent' | 'customer', text: string, start: number, end: number, language?: string, translation?: { language: string; text: string }];

/** A rude customer who reads a card number aloud; an agent who never gives the disclosure. */
const RUDE_CALL: Turn[] = [
  ['agent', 'Hello, thank you for calling, how can I help you today?', 0, 3],
  ['customer', 'This is terrible. Your service is useless and I am furious about the double charge on my account.', 3.5, 9],
  ['agent', 'I am sorry about that. I will check the charge on your account right away.', 10, 14],
  ['customer', 'You people are stupid and awful. My card is four one one one one one one one one one one one one one one one.', 14.5, 22],
  ['agent', 'Thank you. I will send you a refund confirmation by email today.', 23, 27],
  ['customer', 'Esto es horrible, quiero mi dinero.', 27.5, 30, 'es', { language: 'en', text: 'This is horrible, I want my money.' }],
  ['customer', 'Can you call me back tomorrow with the refund number?', 30.5, 33],
];

async function endedSessionWith(o: TestOrg, turns: Turn[]): Promise<string> {
  const res = await gw.api(o.key, 'POST', '/v1/sessions', { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
  expect(res.status).toBe(201);
  const id = res.body.id as string;
  let seq = 0;
  for (const [speaker, text, start, end, language, translation] of turns) {
    await gw.db.query(
      `INSERT INTO transcript_turns (session_id, sequence, speaker, language, text, translation, start_time, end_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [id, ++seq, speaker, language ?? 'en', text, translation ?? null, start, end],
    );
  }
  expect((await gw.api(o.key, 'POST', `/v1/sessions/${id}/end`)).status).toBe(200);
  return id;
}

async function credits(orgId: string): Promise<number> {
  return defined((await gw.db.query<{ credits: number }>('SELECT credits FROM organizations WHERE id = $1', [orgId])).rows[0], 'organization').credits;
}

describe('POST /v1/sessions/{id}/analysis and GET /v1/analyses/{id}', () => {
  it('charges 1 credit, answers 202 with the reduced object, and the job analyses the transcript', async () => {
    const sid = await endedSessionWith(org, RUDE_CALL);
    const before = await credits(org.orgId);
    const res = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, {});
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(['id', 'object', 'session_id', 'status']);
    expect(res.body).toMatchObject({ object: 'analysis', session_id: sid, status: 'processing' });
    expect(res.body.id).toMatch(/^anl_/);
    expect(Number(res.headers.get('x-api-credits-remaining'))).toBe(before - 1);
    expect(await credits(org.orgId)).toBe(before - 1);

    const a = await pollUntil(
      async () => {
        const r = await gw.api(org.key, 'GET', `/v1/analyses/${res.body.id}`);
        expect(r.status).toBe(200);
        return r.body.status !== 'processing' ? r.body : null;
      },
      30_000,
      'analysis completed',
    );
    expect(a).toMatchObject({ id: res.body.id, object: 'analysis', session_id: sid, profile: 'default', status: 'completed', error: null, call_id: null });
    expect(typeof a.completed_at).toBe('string');
    // The rude customer reads negative; the agent's apologetic, helpful turns do not.
    expect(a.sentiment).toEqual({ customer: 'negative', agent: expect.stringMatching(/positive|neutral/) });
    // Compliance: the card number read aloud (turn 4) and the missing disclosure are flagged.
    expect(a.compliance.status).toBe('failed');
    const types = a.compliance.flags.map((f: { type: string }) => f.type).sort();
    expect(types).toEqual(['card_number_spoken', 'missing_disclosure']);
    const card = a.compliance.flags.find((f: { type: string }) => f.type === 'card_number_spoken');
    expect(card).toMatchObject({ speaker: 'customer', sequence: 4 });
    expect(card.description).toContain('1111');
    expect(a.keywords).toEqual(expect.arrayContaining(['charge', 'account', 'refund']));
    expect(a.summary).toMatch(/charge|refund/i);
    expect(a.performance.score).toBeGreaterThanOrEqual(0);
    expect(a.performance.score).toBeLessThanOrEqual(100);
    expect(a.action_items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ assignee: 'agent', priority: 'high', description: expect.stringMatching(/refund confirmation/) }),
        expect.objectContaining({ assignee: 'agent', description: expect.stringMatching(/call me back/) }),
      ]),
    );

    const { rows } = await gw.db.query<{ data: any }>(`SELECT data FROM webhook_events WHERE type = 'analysis.completed' AND data->>'id' = $1`, [a.id]);
    expect(rows).toHaveLength(1);
    const ev = defined(rows[0], 'analysis.completed event').data;
    expect(ev).toMatchObject({ id: a.id, object: 'analysis', session_id: sid, status: 'completed' });
    expect(ev.results.sentiment.label).toBe('negative');
    expect(ev.results.sentiment.overall).toBeLessThan(0);
    expect(ev.results.summary.brief).toBe(a.summary);
    expect(ev.results.quality.score).toBe(a.performance.score);
    expect(ev.results.action_items.length).toBe(a.action_items.length);
  });

  it('honours include and profile; a polite compliant call scores positive and passes', async () => {
    const sid = await endedSessionWith(org, [
      ['agent', 'Hello, this call is recorded for quality. How can I help?', 0, 3],
      ['customer', 'Hi, I would love to upgrade my plan, your service has been great.', 3.5, 7],
      ['agent', 'Wonderful, I will upgrade your plan now. Thank you for being a loyal customer.', 7.8, 11],
      ['customer', 'Thank you so much, that is perfect.', 11.5, 13],
    ]);
    const res = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, { profile: 'compliance', include: ['sentiment', 'compliance', 'performance'] });
    expect(res.status).toBe(202);
    const a = await pollUntil(async () => {
      const r = await gw.api(org.key, 'GET', `/v1/analyses/${res.body.id}`);
      return r.body.status !== 'processing' ? r.body : null;
    }, 30_000);
    expect(a).toMatchObject({
      status: 'completed',
      profile: 'compliance',
      summary: null,
      keywords: null,
      sentiment: { customer: 'positive', agent: 'positive' },
      compliance: { status: 'passed', flags: [] },
    });
    expect(a.performance.score).toBeGreaterThan(70);
  });

  it('gates in order: 404 session_not_found, 400 transcript_not_available, 400 validation, 403 scope; GET 404 analysis_not_found', async () => {
    const other = await gw.createOrg();
    const sid = await endedSessionWith(org, RUDE_CALL);
    const nf = await gw.api(other.key, 'POST', `/v1/sessions/${sid}/analysis`, {});
    expect(nf.status).toBe(404);
    expect(nf.body.error.code).toBe('session_not_found');

    const open = await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
    const active = await gw.api(org.key, 'POST', `/v1/sessions/${open.body.id}/analysis`, {});
    expect(active.status).toBe(400);
    expect(active.body.error).toMatchObject({ type: 'invalid_request_error', code: 'transcript_not_available' });
    const empty = await endedSessionWith(org, []);
    const before = await credits(org.orgId);
    const none = await gw.api(org.key, 'POST', `/v1/sessions/${empty}/analysis`, {});
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('transcript_not_available');
    expect(await credits(org.orgId)).toBe(before); // no charge when creation fails

    for (const body of [{ profile: 'bogus' }, { include: ['summary', 'mood'] }, { extra: 1 }]) {
      const bad = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.type).toBe('validation_error');
    }
    const profile = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, { profile: 'bogus' });
    expect(profile.body.error).toMatchObject({ param: 'profile', message: expect.stringContaining('default, support, sales, compliance') });
    const readOnly = await gw.createOrg({ scopes: ['sessions:read', 'analysis:read'] });
    const scope = await gw.api(readOnly.key, 'POST', `/v1/sessions/${sid}/analysis`, {});
    expect(scope.status).toBe(403);
    expect(scope.body.error.code).toBe('insufficient_permissions');

    const missing = await gw.api(org.key, 'GET', '/v1/analyses/anl_nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'analysis_not_found', param: 'analysis_id' });
    const foreign = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, {});
    expect((await gw.api(other.key, 'GET', `/v1/analyses/${foreign.body.id}`)).status).toBe(404);
  });

  it('an idempotent retry returns the same analysis without a second charge', async () => {
    const sid = await endedSessionWith(org, RUDE_CALL);
    const before = await credits(org.orgId);
    const key = { 'idempotency-key': `anl-${sid}` };
    const first = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, {}, key);
    const again = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, {}, key);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(await credits(org.orgId)).toBe(before - 1);
    const { rows } = await gw.db.query('SELECT id FROM analyses WHERE session_id = $1', [sid]);
    expect(rows).toHaveLength(1);
  });

  it('concurrent requests against a balance of 1: one 202, the rest 402, one analysis, balance 0', async () => {
    const poor = await gw.createOrg();
    const sid = await endedSessionWith(poor, RUDE_CALL);
    await gw.db.query('UPDATE organizations SET credits = 1 WHERE id = $1', [poor.orgId]);
    const results = await Promise.all(Array.from({ length: 8 }, () => gw.api(poor.key, 'POST', `/v1/sessions/${sid}/analysis`, {})));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 402, 402, 402, 402, 402, 402, 402]);
    for (const r of results.filter((x) => x.status === 402)) expect(r.body.error.code).toBe('insufficient_api_credits');
    const won = results.find((r) => r.status === 202)!;
    expect(won.headers.get('x-api-credits-remaining')).toBe('0');
    expect(await credits(poor.orgId)).toBe(0);
    const { rows } = await gw.db.query('SELECT id FROM analyses WHERE session_id = $1', [sid]);
    expect(rows).toHaveLength(1);
  });
});
