// The analysis summary from an OpenAI-compatible chat-completions API (postCall.summary, README
// "Analysis"): the worker sends the transcript and stores the model's paragraph; a failing, silent
// or empty API leaves the extractive summary in place. Real PostgreSQL and Redis; the LLM is a local
// server speaking the chat-completions wire protocol (no LLM is reachable from here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { OpenAiChatServer } from '../helpers/openai-chat-server.js';
import { pollUntil } from '../helpers/recordings.js';
import { defined } from '../helpers/defined.js';

let llm: OpenAiChatServer;
let gw: TestGateway;
let org: TestOrg;
beforeAll(async () => {
  llm = await OpenAiChatServer.start();
  gw = await startTestGateway({
    postCall: {
      jobIntervalMs: 200,
      leaseSeconds: 30,
      summary: { engine: 'openai_compatible', baseUrl: llm.baseUrl, model: 'summary-model-1', apiKey: 'sk-test-summary', timeoutMs: 1500 },
    },
  });
  org = await gw.createOrg();
});
afterAll(async () => {
  await gw?.stop();
  await llm?.close();
});

const TURNS: Array<[speaker: 'agent' | 'customer', text: string, language: string, translation: { language: string; text: string } | null]> = [
  ['agent', 'Thank you for calling, how can I help?', 'en', null],
  ['customer', 'I was charged twice for my order and I want the second charge refunded.', 'en', null],
  ['customer', 'Quiero la confirmación por correo.', 'es', { language: 'en', text: 'I want the confirmation by email.' }],
  ['agent', 'I have refunded the duplicate charge and will email you the confirmation today.', 'en', null],
];

/** An ended session with TURNS, analysed; resolves with the completed analysis and its stored details. */
async function analyse(): Promise<{ summary: string; details: Record<string, unknown> }> {
  const created = await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
  expect(created.status).toBe(201);
  const sid = created.body.id as string;
  let seq = 0;
  for (const [speaker, text, language, translation] of TURNS) {
    await gw.db.query(
      'INSERT INTO transcript_turns (session_id, sequence, speaker, language, text, translation, start_time, end_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [sid, ++seq, speaker, language, text, translation, seq * 4, seq * 4 + 3],
    );
  }
  expect((await gw.api(org.key, 'POST', `/v1/sessions/${sid}/end`)).status).toBe(200);
  const requested = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/analysis`, { include: ['summary'] });
  expect(requested.status).toBe(202);
  const done = await pollUntil(
    async () => {
      const r = await gw.api(org.key, 'GET', `/v1/analyses/${requested.body.id}`);
      return r.body.status !== 'processing' ? r.body : null;
    },
    30_000,
    'analysis finished',
  );
  expect(done.status).toBe('completed');
  const row = defined(
    (await gw.db.query<{ details: Record<string, unknown> }>('SELECT details FROM analyses WHERE id = $1', [done.id])).rows[0],
    'analysis row',
  );
  return { summary: done.summary as string, details: row.details };
}

describe('analysis summary from an OpenAI-compatible API', () => {
  it("stores the model's summary, sent the transcript as labelled lines with its translations, and the key", async () => {
    const paragraph = 'The customer was charged twice; the agent refunded the duplicate charge and will email a confirmation today.';
    llm.replies.push({ text: paragraph });
    const before = llm.requests.length;
    const { summary, details } = await analyse();
    expect(summary).toBe(paragraph);
    expect(details.summary_engine).toBe('openai_compatible');

    expect(llm.requests.length).toBe(before + 1);
    const req = defined(llm.requests.at(-1), 'summary request');
    expect(req.headers.authorization).toBe('Bearer sk-test-summary');
    expect(req.body.model).toBe('summary-model-1');
    expect(req.body.stream).toBe(false);
    expect(req.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(req.body.messages[1]?.content).toBe(
      [
        'Agent: Thank you for calling, how can I help?',
        'Customer: I was charged twice for my order and I want the second charge refunded.',
        'Customer: Quiero la confirmación por correo. [en: I want the confirmation by email.]',
        'Agent: I have refunded the duplicate charge and will email you the confirmation today.',
      ].join('\n'),
    );
  }, 60_000);

  it('keeps the extractive summary when the API fails, stays silent past the timeout, or answers nothing', async () => {
    const extractive: string[] = [];
    for (const reply of [{ status: 503, error: 'overloaded' }, { hang: true as const }, { text: '   ' }]) {
      llm.replies.push(reply);
      const { summary, details } = await analyse();
      expect(details.summary_engine).toBe('extractive');
      expect(summary.length).toBeGreaterThan(0);
      extractive.push(summary);
    }
    // The same transcript gives the same extractive summary each time, taken from its own sentences.
    expect(new Set(extractive).size).toBe(1);
    expect(TURNS.some(([, text]) => defined(extractive[0], 'summary').includes(text.slice(0, 20)))).toBe(true);
  }, 90_000);
});
