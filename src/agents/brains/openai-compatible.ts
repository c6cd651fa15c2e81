// Any OpenAI-compatible chat-completions API (OpenAI, Ollama, vLLM, llama.cpp server) as the brain:
// `instructions` are the system prompt, the conversation is kept per session, the agent's tools are
// offered as functions, and replies stream (server-sent events) so the first complete sentence is
// spoken while the rest is still being generated. Tool calls arrive as `tool_calls` deltas split
// across chunks and are assembled by index; tool results go back as `tool` messages.
import type { AgentDefinition, Brain, BrainAction, BrainInput, SecretResolver } from '../types.js';
import { sentimentOf } from '../intent-matcher.js';

interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface OpenAiBrainOptions {
  agent: AgentDefinition;
  secrets: SecretResolver;
  /** No response, or no new chunk, for this long fails the turn. */
  timeoutMs: number;
  /** Extra system text (help_chat_voice: the knowledge base). */
  context?: string;
}

export class LlmError extends Error {
  constructor(
    readonly code: 'llm_http_error' | 'llm_timeout' | 'llm_bad_stream' | 'llm_no_key',
    message: string,
  ) {
    super(message);
  }
}

/** The escalation offered to the model as a function, when the agent has an escalation policy. */
const ESCALATE_FUNCTION = 'escalate_to_human';
const SENTENCE_END = /[.!?]["')\]]*\s/; // the end of the stream flushes the last one

export class OpenAiCompatibleBrain implements Brain {
  private readonly messages: ChatMessage[] = [];
  private readonly heard: string[] = [];
  private abort: AbortController | null = null;
  /** Tool calls of the last reply still without a result: the model is asked again once all are in. */
  private readonly awaiting = new Set<string>();

  constructor(private readonly o: OpenAiBrainOptions) {
    const system = [
      o.agent.instructions ?? `You are ${o.agent.name}, a helpful voice agent. Answer briefly: your replies are spoken on a phone call.`,
      o.context,
    ]
      .filter(Boolean)
      .join('\n\n');
    this.messages.push({ role: 'system', content: system });
  }

  async *respond(input: BrainInput): AsyncIterable<BrainAction> {
    if (input.kind === 'utterance') {
      this.heard.push(input.text);
      this.messages.push({ role: 'user', content: input.text });
    } else {
      this.messages.push({ role: 'tool', tool_call_id: input.call.call_id, content: JSON.stringify(input.ok ? input.result : { error: input.result }) });
      this.awaiting.delete(input.call.call_id);
      if (this.awaiting.size > 0) return;
    }
    yield* this.complete();
  }

  close(): void {
    this.abort?.abort();
  }

  checkpoint(): () => void {
    const saved = { messages: this.messages.length, heard: this.heard.length, awaiting: [...this.awaiting] };
    return () => {
      this.abort?.abort();
      this.messages.length = saved.messages;
      this.heard.length = saved.heard;
      this.awaiting.clear();
      for (const id of saved.awaiting) this.awaiting.add(id);
    };
  }

  private tools(): unknown[] | undefined {
    const fns = this.o.agent.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
    if (this.o.agent.escalation) {
      fns.push({
        type: 'function',
        function: {
          name: ESCALATE_FUNCTION,
          description: 'Hand the caller over to a human agent.',
          parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] },
        },
      });
    }
    return fns.length ? fns : undefined;
  }

  private async *complete(): AsyncIterable<BrainAction> {
    const { brain } = this.o.agent;
    const key = brain.api_key_secret ? await this.o.secrets(this.o.agent.orgId, brain.api_key_secret) : null;
    if (brain.api_key_secret && !key) throw new LlmError('llm_no_key', `secret '${brain.api_key_secret}' is not set`);
    const controller = (this.abort = new AbortController());
    const signal = controller.signal;
    let timer = setTimeout(() => this.abort?.abort(), this.o.timeoutMs);
    const touch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.abort?.abort(), this.o.timeoutMs);
    };
    const url = `${(brain.base_url ?? '').replace(/\/+$/, '')}/chat/completions`;
    let text = '';
    let pending = '';
    const calls: Array<{ id: string; name: string; args: string }> = [];
    try {
      const res = await fetch(url, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ model: brain.model, messages: this.messages, stream: true, tools: this.tools() }),
      });
      if (!res.ok || !res.body) {
        const body = await res.text().catch(() => '');
        throw new LlmError('llm_http_error', `${res.status} from ${url}: ${body.slice(0, 300)}`);
      }
      for await (const data of sseData(res.body)) {
        touch();
        if (data === '[DONE]') break;
        let chunk: {
          choices?: Array<{
            delta?: { content?: string | null; tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }> };
          }>;
          error?: { message?: string };
        };
        try {
          chunk = JSON.parse(data);
        } catch {
          throw new LlmError('llm_bad_stream', `not JSON in the event stream: ${data.slice(0, 100)}`);
        }
        if (chunk.error) throw new LlmError('llm_http_error', chunk.error.message ?? 'error in stream');
        const delta = chunk.choices?.[0]?.delta;
        if (!delta) continue;
        if (delta.content) {
          text += delta.content;
          pending += delta.content;
          // Speak each sentence as soon as it is complete.
          let m: RegExpExecArray | null;
          while ((m = SENTENCE_END.exec(pending))) {
            const sentence = pending.slice(0, m.index + m[0].length).trim();
            pending = pending.slice(m.index + m[0].length);
            if (sentence) yield { kind: 'say', text: sentence };
          }
        }
        for (const tc of delta.tool_calls ?? []) {
          const c = (calls[tc.index] ??= { id: '', name: '', args: '' });
          if (tc.id) c.id = tc.id;
          if (tc.function?.name) c.name += tc.function.name;
          if (tc.function?.arguments) c.args += tc.function.arguments;
        }
      }
    } catch (err) {
      if (signal.aborted) throw new LlmError('llm_timeout', `no answer from ${url} within ${this.o.timeoutMs} ms`);
      throw err;
    } finally {
      clearTimeout(timer);
      this.abort = null;
      controller.abort(); // a no-op once the stream is read; drops the request when the turn was cancelled
    }
    if (pending.trim()) yield { kind: 'say', text: pending.trim() };
    const made = calls.filter(Boolean);
    this.messages.push({
      role: 'assistant',
      content: text || null,
      ...(made.length ? { tool_calls: made.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.args } })) } : {}),
    });
    for (const c of made) {
      let args: Record<string, unknown> = {};
      try {
        args = c.args ? (JSON.parse(c.args) as Record<string, unknown>) : {};
      } catch {
        args = { _raw: c.args };
      }
      if (c.name === ESCALATE_FUNCTION) {
        this.messages.push({ role: 'tool', tool_call_id: c.id, content: '{"ok":true}' });
        yield {
          kind: 'escalate',
          reason: typeof args.reason === 'string' && args.reason ? args.reason : 'requested by the agent',
          summary: `Customer said: ${this.heard.slice(-3).join(' / ')}`,
          sentiment: sentimentOf(this.heard),
        };
        continue;
      }
      this.awaiting.add(c.id);
      yield { kind: 'tool_call', call: { name: c.name, arguments: args, call_id: c.id } };
    }
  }
}

/** The `data:` payloads of a server-sent event stream (events separated by a blank line). */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
      const event = buf.slice(0, i);
      buf = buf.slice(i).replace(/^\r?\n\r?\n/, '');
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield data;
    }
  }
}
