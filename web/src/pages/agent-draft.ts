// The agent editor's form state and its conversion to and from the /v1 agent object. Only shape
// conversion lives here (lines → arrays, blank → null, JSON text → object): every rule about what
// an agent may contain is the API's, whose validation messages the editor shows field by field.
// The /v1 types only (the .js suffix lets node16 resolution, used when tests import this file, find v1.d.ts).
import type { paths } from '../api/v1.js';

export type AgentObject = paths['/v1/agents/{id}']['get']['responses'][200]['content']['application/json'];
export type AgentBody = paths['/v1/agents']['post']['requestBody']['content']['application/json'];

export interface IntentDraft {
  name: string;
  examples: string;
  reply: string;
  tool: string;
  escalate: boolean;
  end_call: boolean;
}
export interface ToolDraft {
  name: string;
  description: string;
  webhook_url: string;
  parameters: string;
}
export interface ArticleDraft {
  title: string;
  content: string;
}
export interface AgentDraft {
  id: string;
  name: string;
  description: string;
  language: string;
  greeting: string;
  instructions: string;
  provider: 'scripted' | 'openai_compatible';
  model: string;
  base_url: string;
  api_key_secret: string;
  intents: IntentDraft[];
  tools: ToolDraft[];
  escalation: boolean;
  keywords: string;
  escalation_message: string;
  transfer_to: string;
  knowledge_base: ArticleDraft[];
}

export const NEW_INTENT: IntentDraft = { name: '', examples: '', reply: '', tool: '', escalate: false, end_call: false };
export const NEW_TOOL: ToolDraft = {
  name: '',
  description: '',
  webhook_url: '',
  parameters: JSON.stringify({ type: 'object', properties: {}, required: [] }, null, 2),
};
export const NEW_ARTICLE: ArticleDraft = { title: '', content: '' };

export function emptyDraft(): AgentDraft {
  return {
    id: '',
    name: '',
    description: '',
    language: 'en',
    greeting: 'Hello, how can I help?',
    instructions: '',
    provider: 'scripted',
    model: '',
    base_url: '',
    api_key_secret: '',
    intents: [],
    tools: [],
    escalation: false,
    keywords: '',
    escalation_message: 'Let me connect you with a colleague.',
    transfer_to: '',
    knowledge_base: [],
  };
}

export function draftOf(a: AgentObject): AgentDraft {
  return {
    id: a.id,
    name: a.name,
    description: a.description ?? '',
    language: a.language ?? '',
    greeting: a.greeting ?? '',
    instructions: a.instructions ?? '',
    provider: a.brain.provider,
    model: a.brain.model ?? '',
    base_url: a.brain.base_url ?? '',
    api_key_secret: a.brain.api_key_secret ?? '',
    intents: a.intents.map((i) => ({
      name: i.name,
      examples: i.examples.join('\n'),
      reply: i.reply,
      tool: i.tool ?? '',
      escalate: Boolean(i.escalate),
      end_call: Boolean(i.end_call),
    })),
    tools: a.tools.map((t) => ({
      name: t.name,
      description: t.description,
      webhook_url: t.webhook_url ?? '',
      parameters: JSON.stringify(t.parameters, null, 2),
    })),
    escalation: a.escalation !== null,
    keywords: a.escalation?.keywords.join('\n') ?? '',
    escalation_message: a.escalation?.message ?? '',
    transfer_to: a.escalation?.transfer_to ?? '',
    knowledge_base: a.knowledge_base.map((k) => ({ title: k.title, content: k.content })),
  };
}

/** A field the browser itself cannot turn into JSON (the API never sees it). */
export class DraftError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

const lines = (s: string): string[] =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const orNull = (s: string): string | null => (s.trim() ? s.trim() : null);

/** The request body for POST /v1/agents or PATCH /v1/agents/{id} (the whole editable definition). */
export function bodyOf(d: AgentDraft): AgentBody {
  const brain: AgentBody['brain'] = { provider: d.provider };
  if (brain && d.provider === 'openai_compatible') {
    if (d.model.trim()) brain.model = d.model.trim();
    if (d.base_url.trim()) brain.base_url = d.base_url.trim();
  }
  if (brain && d.api_key_secret.trim()) brain.api_key_secret = d.api_key_secret.trim();
  return {
    name: d.name.trim(),
    description: orNull(d.description),
    language: orNull(d.language),
    greeting: orNull(d.greeting),
    instructions: orNull(d.instructions),
    brain,
    intents: d.intents.map((i) => ({
      name: i.name.trim(),
      examples: lines(i.examples),
      reply: i.reply.trim(),
      ...(i.tool ? { tool: i.tool } : {}),
      ...(i.escalate ? { escalate: true } : {}),
      ...(i.end_call ? { end_call: true } : {}),
    })),
    tools: d.tools.map((t, n) => {
      let parameters: Record<string, unknown>;
      try {
        parameters = JSON.parse(t.parameters || '{}');
      } catch (err) {
        throw new DraftError(`tools.${n}.parameters`, `Tool ${n + 1}: the parameters are not valid JSON (${(err as Error).message}).`);
      }
      return { name: t.name.trim(), description: t.description.trim(), parameters, ...(t.webhook_url.trim() ? { webhook_url: t.webhook_url.trim() } : {}) };
    }),
    escalation: d.escalation
      ? { keywords: lines(d.keywords), message: d.escalation_message.trim(), ...(d.transfer_to.trim() ? { transfer_to: d.transfer_to.trim() } : {}) }
      : null,
    knowledge_base: d.knowledge_base.map((k) => ({ title: k.title.trim(), content: k.content.trim() })),
  };
}

/**
 * The form field an API error's `param` points at: the longest known field id that prefixes it
 * (`intents.0.examples.1` → the examples box of intent 1; `brain.model` → the model box).
 */
export function fieldOf(param: string | undefined, known: Set<string>): string | undefined {
  if (!param) return undefined;
  const parts = param.split('.');
  for (let n = parts.length; n > 0; n--) {
    const p = parts.slice(0, n).join('.');
    if (known.has(p)) return p;
  }
  return undefined;
}
