// The embedded brain: intents of the agent resource drive the dialogue. A confident match replies
// (template filled with slot values and tool results), a middling one asks "did you mean …", a miss
// gets the fallback; after MAX_MISSES misunderstandings in a row the caller is handed to a human.
import { randomUUID } from 'node:crypto';
import { containsPhrase, CLARIFY_THRESHOLD, MATCH_THRESHOLD, rankIntents, sentimentOf } from '../intent-matcher.js';
import { extractSlots, fillTemplate, type Slots } from '../slots.js';
import type { AgentDefinition, AgentIntent, Brain, BrainAction, BrainInput } from '../types.js';

export const MAX_MISSES = 2;
export const FALLBACK_REPLY = "Sorry, I didn't understand that. Could you say it another way?";
const YES = ['yes', 'yeah', 'yep', 'correct', 'right', 'sure', 'that is right', 'exactly'];
const NO = ['no', 'nope', 'not really', 'wrong'];

export class ScriptedBrain implements Brain {
  private misses = 0;
  private pendingClarify: { intent: AgentIntent; slots: Slots } | null = null;
  private pendingTool: { intent: AgentIntent; slots: Slots; callId: string } | null = null;
  private readonly heard: string[] = [];

  constructor(private readonly agent: AgentDefinition) {}

  checkpoint(): () => void {
    const saved = { misses: this.misses, pendingClarify: this.pendingClarify, pendingTool: this.pendingTool, heard: this.heard.length };
    return () => {
      this.misses = saved.misses;
      this.pendingClarify = saved.pendingClarify;
      this.pendingTool = saved.pendingTool;
      this.heard.length = saved.heard;
    };
  }

  /** Both confidently the same intent with the same slot values, and alike on escalation words, yes and no. */
  sameMeaning(a: string, b: string): boolean {
    const keywords = this.agent.escalation?.keywords ?? [];
    for (const words of [keywords, YES, NO]) if (containsPhrase(a, words) !== containsPhrase(b, words)) return false;
    const confident = (t: string) => {
      const [best] = rankIntents(t, this.agent.intents);
      return best && best.score >= MATCH_THRESHOLD ? best.intent.name : null;
    };
    const intent = confident(a);
    return intent !== null && intent === confident(b) && JSON.stringify(extractSlots(a)) === JSON.stringify(extractSlots(b));
  }

  async *respond(input: BrainInput): AsyncIterable<BrainAction> {
    if (input.kind === 'tool_result') {
      yield* this.afterTool(input);
      return;
    }
    const text = input.text;
    this.heard.push(text);
    const esc = this.agent.escalation;
    const keyword = esc ? containsPhrase(text, esc.keywords) : null;
    if (keyword) {
      yield this.escalate(`keyword: ${keyword}`);
      return;
    }
    if (this.pendingClarify) {
      const asked = this.pendingClarify;
      this.pendingClarify = null;
      if (containsPhrase(text, YES)) {
        yield* this.act(asked.intent, { ...asked.slots, ...extractSlots(text) });
        return;
      }
      if (containsPhrase(text, NO) && (rankIntents(text, this.agent.intents)[0]?.score ?? 0) < CLARIFY_THRESHOLD) {
        yield { kind: 'say', text: 'Alright. What can I help you with?' };
        return;
      }
    }
    const [best] = rankIntents(text, this.agent.intents);
    const slots = extractSlots(text);
    if (best && best.score >= MATCH_THRESHOLD) {
      this.misses = 0;
      yield* this.act(best.intent, slots);
      return;
    }
    if (best && best.score >= CLARIFY_THRESHOLD) {
      this.pendingClarify = { intent: best.intent, slots };
      yield { kind: 'say', text: `Just to be sure: is this about ${best.intent.name.replace(/[_.-]+/g, ' ')}?` };
      return;
    }
    this.misses++;
    if (this.misses >= MAX_MISSES && esc) {
      this.misses = 0;
      yield this.escalate('repeated misunderstanding');
      return;
    }
    yield { kind: 'say', text: FALLBACK_REPLY };
  }

  private async *act(intent: AgentIntent, slots: Slots): AsyncIterable<BrainAction> {
    const tool = intent.tool ? this.agent.tools.find((t) => t.name === intent.tool) : undefined;
    if (tool) {
      const callId = `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      this.pendingTool = { intent, slots, callId };
      yield { kind: 'tool_call', call: { name: tool.name, arguments: toolArguments(tool.parameters, slots), call_id: callId } };
      return;
    }
    yield* this.finish(intent, slots);
  }

  private async *afterTool(input: Extract<BrainInput, { kind: 'tool_result' }>): AsyncIterable<BrainAction> {
    const pending = this.pendingTool;
    if (!pending || pending.callId !== input.call.call_id) return;
    this.pendingTool = null;
    if (!input.ok) {
      yield { kind: 'say', text: "Sorry, I couldn't look that up right now." };
      if (this.agent.escalation) yield this.escalate(`tool ${input.call.name} failed`);
      return;
    }
    const result = input.result && typeof input.result === 'object' ? (input.result as Record<string, unknown>) : { value: input.result };
    yield* this.finish(pending.intent, { ...pending.slots, ...flatStrings(result) }, result);
  }

  private async *finish(intent: AgentIntent, slots: Slots, result?: Record<string, unknown>): AsyncIterable<BrainAction> {
    yield { kind: 'say', text: fillTemplate(intent.reply, { ...slots, ...(result ?? {}), result }) };
    if (intent.escalate) yield this.escalate(`intent: ${intent.name}`);
    else if (intent.end_call) yield { kind: 'end', reason: 'agent_completed' };
  }

  private escalate(reason: string): BrainAction {
    const summary = this.heard.slice(-3).join(' / ');
    return { kind: 'escalate', reason, summary: summary ? `Customer said: ${summary}` : 'No customer speech yet.', sentiment: sentimentOf(this.heard) };
  }
}

/** Tool arguments from slot values: each parameter property takes the slot of its name, or a close kind. */
function toolArguments(parameters: Record<string, unknown>, slots: Slots): Record<string, unknown> {
  const props = (parameters.properties ?? {}) as Record<string, { type?: string }>;
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(props)) {
    const key =
      name in slots
        ? name
        : /order|id|reference|ticket/i.test(name)
          ? 'order_id'
          : /date|day/i.test(name)
            ? 'date'
            : /time|hour/i.test(name)
              ? 'time'
              : schema?.type === 'number' || schema?.type === 'integer'
                ? 'number'
                : null;
    if (!key || slots[key] === undefined) continue;
    args[name] = schema?.type === 'number' || schema?.type === 'integer' ? Number(slots[key].replace(/\D/g, '')) : slots[key];
  }
  return args;
}

function flatStrings(o: Record<string, unknown>): Slots {
  const out: Slots = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  return out;
}
