// The analysis summary from any OpenAI-compatible chat-completions API (POST <baseUrl>/chat/completions,
// not streamed): the transcript goes in as speaker-labelled lines, a short paragraph comes back. The
// caller (jobs/analysis-worker.ts) keeps the extractive summary when this throws.
import type { AnalysisTurn } from './transcript.js';

export interface LlmSummaryOptions {
  baseUrl: string;
  model: string;
  /** Sent as a bearer token when non-empty. */
  apiKey: string;
  timeoutMs: number;
}

/** The model reads at most this much transcript (about 12k tokens); a longer call keeps its opening and its end. */
const MAX_TRANSCRIPT_CHARS = 48_000;

const INSTRUCTIONS =
  'You summarize phone calls between an agent and a customer for the people who follow up on them. ' +
  'Write one short paragraph (at most four sentences) in English: why the customer called, what was done or agreed, ' +
  'and anything still open. Use only what the transcript says; do not invent names, numbers or outcomes.';

/** "Agent: …" / "Customer: …" lines; a non-English turn carries its stored translation too. */
export function transcriptForSummary(turns: readonly AnalysisTurn[]): string {
  const lines = turns.map((t) => {
    const who = t.speaker === 'agent' ? 'Agent' : 'Customer';
    const translated = t.translation && t.translation.text !== t.text ? ` [${t.translation.language}: ${t.translation.text}]` : '';
    return `${who}: ${t.text}${translated}`;
  });
  const text = lines.join('\n');
  if (text.length <= MAX_TRANSCRIPT_CHARS) return text;
  const half = MAX_TRANSCRIPT_CHARS / 2;
  return `${text.slice(0, half)}\n[… middle of the call left out …]\n${text.slice(-half)}`;
}

export class LlmSummaryError extends Error {}

export async function llmSummary(turns: readonly AnalysisTurn[], o: LlmSummaryOptions): Promise<string> {
  const url = `${o.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      signal: AbortSignal.timeout(o.timeoutMs),
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      body: JSON.stringify({
        model: o.model,
        temperature: 0,
        stream: false,
        messages: [
          { role: 'system', content: INSTRUCTIONS },
          { role: 'user', content: transcriptForSummary(turns) },
        ],
      }),
    });
  } catch (err) {
    throw new LlmSummaryError(`${url}: ${(err as Error).name === 'TimeoutError' ? `no answer within ${o.timeoutMs} ms` : (err as Error).message}`);
  }
  const raw = await res.text().catch(() => '');
  if (!res.ok) throw new LlmSummaryError(`${res.status} from ${url}: ${raw.slice(0, 300)}`);
  let body: { choices?: Array<{ message?: { content?: string | null } }> };
  try {
    body = JSON.parse(raw) as typeof body;
  } catch {
    throw new LlmSummaryError(`${url} answered something that is not JSON: ${raw.slice(0, 100)}`);
  }
  const summary = body.choices?.[0]?.message?.content?.trim();
  if (!summary) throw new LlmSummaryError(`${url} answered without a summary (no choices[0].message.content)`);
  return summary;
}
