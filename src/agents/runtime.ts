// One session's conversation with its agent: the greeting when the session is ready, every
// customer final through the brain, and the brain's actions carried out in order (say, tool_call,
// escalate, end). Turns are handled one at a time; a brain or tool failure is spoken as an apology
// and logged, never thrown: the session goes on. A turn may start early, from the recognizer's
// settled hypothesis: its speech is prepared at once (and held until the final confirms it, unless
// speakBeforeFinal), and it acts (tools, escalation, end) only once the final confirms it; a final
// that asks something else cancels it (speech dropped or cut, brain state restored) and is answered
// instead, so one utterance never gets two replies.
import type { Logger } from 'pino';
import type { ToolRunner } from './tool-runner.js';
import type { AgentDefinition, Brain, BrainAction, BrainInput, ToolCall } from './types.js';

export interface SpokenResult {
  /** What the customer actually heard (all of it, or up to the barge-in). */
  spoken: string;
  interrupted: boolean;
}

export type TransferOutcome = 'transferred' | 'failed' | 'not_possible';

/** What the runtime needs of its live session (the sessions plane implements it). */
export interface AgentHost {
  readonly sessionId: string;
  readonly orgId: string;
  /**
   * Speaks to the customer; starts at the first sentence; resolves once played or cut off. With
   * `hold`, the speech is prepared but plays only once `hold` resolves true (dropped on false).
   */
  say(text: string, hold?: Promise<boolean>): Promise<SpokenResult>;
  /** Writes an outbox event (ai_agent.tool_called, ai_agent.escalation_requested). */
  recordEvent(type: 'ai_agent.tool_called' | 'ai_agent.escalation_requested', data: Record<string, unknown>): Promise<void>;
  /** Dials `to` as the agent party and bridges it to the customer; not_possible without a phone leg. */
  transfer(to: string): Promise<TransferOutcome>;
  end(reason: string): void;
  /** Drops the agent's queued and playing speech (a reply started early whose final asks something else). */
  cancelSpeech(): void;
}

/** A turn started from the recognizer's hypothesis, waiting for the final's verdict. */
class EarlyTurn {
  /** The final asks the same: the reply stands (null until the final arrives). */
  stands: boolean | null = null;
  started = false;
  /** Puts the brain's state back as before this turn (set when the turn starts). */
  restore: (() => void) | null = null;
  readonly verdict: Promise<boolean>;
  private decideFn!: (stands: boolean) => void;

  constructor(readonly text: string) {
    this.verdict = new Promise((resolve) => (this.decideFn = resolve));
  }

  get cancelled(): boolean {
    return this.stands === false;
  }

  decide(stands: boolean): void {
    this.stands = stands;
    this.decideFn(stands);
  }
}

/** Lower case, letters and digits only: recognizer texts differ in nothing else that matters. */
const normalizeUtterance = (t: string): string =>
  t
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

export interface AgentRuntimeOptions {
  agent: AgentDefinition;
  brain: Brain;
  host: AgentHost;
  tools: ToolRunner;
  /** A tool slower than this gets a spoken filler (default 1000 ms). */
  fillerAfterMs?: number;
  fillerText?: string;
  /** Early turns play before their final confirms them (default: prepared, held until it does). */
  speakBeforeFinal?: boolean;
  log?: Logger;
}

/** Most brain round trips (tool call → result → …) for one customer turn. */
const MAX_STEPS = 6;
export const TRANSFER_FAILED_REPLY = "I'm sorry, I couldn't reach anyone right now. Please try again later.";
const BRAIN_FAILED_REPLY = "Sorry, I'm having trouble right now. Could you repeat that?";

export class AgentRuntime {
  private tail: Promise<void> = Promise.resolve();
  private started = false;
  private closed = false;
  /** After a transfer the human takes over: the agent stops listening and speaking. */
  private steppedOut = false;
  private early: EarlyTurn | null = null;
  /** Counts for tests and benchmarks: early turns started, confirmed by their final, cancelled. */
  readonly earlyStats = { started: 0, confirmed: 0, cancelled: 0 };
  private readonly o: Required<Pick<AgentRuntimeOptions, 'fillerAfterMs' | 'fillerText'>> & AgentRuntimeOptions;

  constructor(opts: AgentRuntimeOptions) {
    this.o = { fillerAfterMs: 1000, fillerText: 'One moment, please.', ...opts };
  }

  get active(): boolean {
    return !this.closed && !this.steppedOut;
  }

  /** The session is ready (socket or phone leg connected): the greeting is spoken once. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    const greeting = this.o.agent.greeting?.trim();
    if (greeting) this.enqueue(async () => void (await this.o.host.say(greeting)));
  }

  customerSaid(text: string): void {
    if (!this.active || !text.trim()) return;
    this.enqueue(() => this.turn({ kind: 'utterance', text }));
  }

  /**
   * Starts a turn from the recognizer's settled hypothesis, before the final; false when it will not
   * (the brain cannot restore its state, or an earlier early turn still awaits its final).
   */
  customerSaidEarly(text: string): boolean {
    if (!this.active || !text.trim() || !this.o.brain.checkpoint || this.early) return false;
    const turn = new EarlyTurn(text);
    this.early = turn;
    this.earlyStats.started++;
    this.enqueue(() => this.earlyTurn(turn));
    return true;
  }

  /** The final (null: none came) of the utterance answered early: confirms the reply, or replaces it. */
  customerFinalAfterEarly(finalText: string | null): void {
    const turn = this.early;
    this.early = null;
    if (!turn) {
      if (finalText) this.customerSaid(finalText);
      return;
    }
    const brain = this.o.brain;
    const stands =
      finalText !== null && (normalizeUtterance(finalText) === normalizeUtterance(turn.text) || (brain.sameMeaning?.(turn.text, finalText) ?? false));
    turn.decide(stands);
    if (stands) {
      this.earlyStats.confirmed++;
      return;
    }
    this.earlyStats.cancelled++;
    if (turn.started) {
      if (this.o.speakBeforeFinal) this.o.host.cancelSpeech(); // held speech is dropped by its hold
      turn.restore?.(); // also stops a brain waiting on the network, so the loop ends now
    }
    if (finalText) this.customerSaid(finalText); // queued behind the cancelled turn
  }

  close(): void {
    this.closed = true;
    this.early?.decide(false); // a turn waiting for its final lets go
    this.early = null;
    this.o.brain.close?.();
  }

  /** Resolves when every queued turn is done (tests, benchmarks). */
  idle(): Promise<void> {
    return this.tail;
  }

  private enqueue(work: () => Promise<void>): void {
    this.tail = this.tail
      .then(() => (this.active ? work() : undefined))
      .catch((err) => {
        this.o.log?.error({ err }, 'agent turn failed');
      });
  }

  private async earlyTurn(turn: EarlyTurn): Promise<void> {
    if (turn.cancelled) return; // the final came first and asked something else
    turn.started = true;
    const restore = (turn.restore = this.o.brain.checkpoint!());
    await this.turn({ kind: 'utterance', text: turn.text }, turn);
    if (turn.cancelled) restore();
  }

  private async turn(first: BrainInput, early?: EarlyTurn): Promise<void> {
    const inputs: BrainInput[] = [first];
    for (let step = 0; inputs.length > 0 && step < MAX_STEPS && this.active && !early?.cancelled; step++) {
      inputs.push(...(await this.runBrain(inputs.shift()!, early)));
    }
  }

  /** Runs the brain on one input; returns the tool results to feed back. */
  private async runBrain(input: BrainInput, early?: EarlyTurn): Promise<BrainInput[]> {
    const toolResults: BrainInput[] = [];
    const speaking: Array<Promise<SpokenResult>> = [];
    try {
      for await (const action of this.o.brain.respond(input)) {
        if (!this.active || early?.cancelled) break;
        if (action.kind === 'say') {
          const hold = early && !this.o.speakBeforeFinal ? early.verdict : undefined;
          speaking.push(this.o.host.say(action.text, hold));
          continue;
        }
        await Promise.all(speaking.splice(0)); // escalate / end / tools come after what was said
        // Nothing but speech happens on an unconfirmed hypothesis.
        if (early && !(await early.verdict)) break;
        const r = await this.act(action);
        if (r) toolResults.push(r);
      }
    } catch (err) {
      if (!early?.cancelled) {
        this.o.log?.warn({ err }, 'agent brain failed');
        speaking.push(this.o.host.say(BRAIN_FAILED_REPLY));
      }
    }
    await Promise.all(speaking);
    return toolResults;
  }

  private async act(action: Exclude<BrainAction, { kind: 'say' }>): Promise<BrainInput | null> {
    const { host, agent } = this.o;
    switch (action.kind) {
      case 'tool_call':
        return this.callTool(action.call);
      case 'escalate': {
        await host.recordEvent('ai_agent.escalation_requested', {
          session_id: host.sessionId,
          reason: action.reason,
          context: { summary: action.summary, sentiment: action.sentiment },
        });
        const esc = agent.escalation;
        await host.say(esc?.message ?? 'Let me connect you to a person.');
        if (esc?.transfer_to) {
          const outcome = await host.transfer(esc.transfer_to);
          if (outcome === 'transferred') this.steppedOut = true;
          else if (outcome === 'failed') await host.say(TRANSFER_FAILED_REPLY);
        }
        return null;
      }
      case 'end':
        this.closed = true;
        host.end(action.reason);
        return null;
    }
  }

  private async callTool(call: ToolCall): Promise<BrainInput> {
    const { host, agent } = this.o;
    await host.recordEvent('ai_agent.tool_called', { session_id: host.sessionId, tool: { name: call.name, arguments: call.arguments, call_id: call.call_id } });
    const tool = agent.tools.find((t) => t.name === call.name);
    const filler = setTimeout(() => void host.say(this.o.fillerText), this.o.fillerAfterMs);
    try {
      const r = await this.o.tools.run(host.orgId, host.sessionId, tool, call);
      if (!r.ok) this.o.log?.warn({ tool: call.name, result: r.result }, 'agent tool failed');
      return { kind: 'tool_result', call, ok: r.ok, result: r.result };
    } finally {
      clearTimeout(filler);
    }
  }
}
