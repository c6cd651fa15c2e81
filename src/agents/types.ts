// The agent plane's types: an agent as a live session uses it (the `agt_` row with the session's
// overrides applied), the actions a brain returns, and the brain interface every provider implements.

export interface AgentIntent {
  name: string;
  examples: string[];
  reply: string;
  tool?: string;
  escalate?: boolean;
  end_call?: boolean;
}

export interface AgentTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  webhook_url?: string;
}

export interface AgentEscalation {
  keywords: string[];
  message: string;
  transfer_to?: string;
}

export interface AgentArticle {
  title: string;
  content: string;
}

export interface AgentBrainConfig {
  provider: 'scripted' | 'openai_compatible';
  model?: string;
  base_url?: string;
  /** Name of the organization's secret holding the API key (never the key itself). */
  api_key_secret?: string;
}

/** What the runtime needs of an agent, overrides applied. */
export interface AgentDefinition {
  id: string;
  orgId: string;
  name: string;
  language: string | null;
  greeting: string | null;
  instructions: string | null;
  brain: AgentBrainConfig;
  intents: AgentIntent[];
  tools: AgentTool[];
  escalation: AgentEscalation | null;
  knowledgeBase: AgentArticle[];
  voice: Record<string, unknown> | null;
}

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
  call_id: string;
}

/** What a brain asks the runtime to do. `say` text may arrive sentence by sentence. */
export type BrainAction =
  | { kind: 'say'; text: string }
  | { kind: 'tool_call'; call: ToolCall }
  | { kind: 'escalate'; reason: string; summary: string; sentiment: string }
  | { kind: 'end'; reason: string };

/** What the runtime tells a brain. */
export type BrainInput = { kind: 'utterance'; text: string } | { kind: 'tool_result'; call: ToolCall; ok: boolean; result: unknown };

export interface Brain {
  /** Actions for one input, in order; a `tool_call` is answered by a later `tool_result` input. */
  respond(input: BrainInput): AsyncIterable<BrainAction>;
  close?(): void;
  /**
   * Brains that can answer early (from the recognizer's hypothesis) implement this: it saves the
   * conversation state and returns what puts it back, used when the final changes what was meant.
   */
  checkpoint?(): () => void;
  /** Whether utterances `a` and `b` ask the same (same reply and actions); without it, equal text only. */
  sameMeaning?(a: string, b: string): boolean;
}

/** Resolves an organization's named secret (the openai_compatible API key); null when unset. */
export type SecretResolver = (orgId: string, name: string) => Promise<string | null>;
