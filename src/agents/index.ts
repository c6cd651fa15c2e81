// Public door of agents/: the AI agent runtime (ai_agent, help_chat_voice), its brains, tools,
// escalation and knowledge base. sessions/ builds one AgentRuntime per agent session through it.
import type { Logger } from 'pino';
import type { Db } from '../store/index.js';
import { getAgent, orgAllowedOverrides } from '../store/index.js';
import { resolveAgent } from './definition.js';
import { ScriptedBrain } from './brains/scripted.js';
import { HelpDeskBrain } from './brains/help-desk.js';
import { OpenAiCompatibleBrain } from './brains/openai-compatible.js';
import { AgentRuntime, type AgentHost } from './runtime.js';
import { ToolRunner, TOOL_SIGNING_SECRET } from './tool-runner.js';
import type { AgentDefinition, Brain, SecretResolver } from './types.js';

export * from './types.js';
export { AgentRuntime, TRANSFER_FAILED_REPLY, type AgentHost, type SpokenResult, type TransferOutcome } from './runtime.js';
export { ToolRunner, TOOL_SIGNING_SECRET, type ToolResult } from './tool-runner.js';
export { ScriptedBrain, FALLBACK_REPLY, MAX_MISSES } from './brains/scripted.js';
export { HelpDeskBrain, NO_MATCH_REPLY } from './brains/help-desk.js';
export { OpenAiCompatibleBrain, LlmError } from './brains/openai-compatible.js';
export { KnowledgeBase, shortAnswer } from './knowledge-base.js';
export { rankIntents, MATCH_THRESHOLD, CLARIFY_THRESHOLD } from './intent-matcher.js';
export { extractSlots, fillTemplate } from './slots.js';
export { splitSentences, wordsToDigits, normalize } from './text.js';
export { resolveAgent } from './definition.js';

export interface AgentServicesOptions {
  toolTimeoutMs: number;
  fillerAfterMs: number;
  llmTimeoutMs: number;
  secrets: SecretResolver;
  /** Early turns play before their final confirms them (else held until it does). */
  earlySpeak?: boolean;
}

/** What every agent session of a node shares: the tool runner and the secret resolver. */
export class AgentServices {
  readonly tools: ToolRunner;

  constructor(readonly o: AgentServicesOptions) {
    this.tools = new ToolRunner({
      timeoutMs: o.toolTimeoutMs,
      signingSecrets: async (orgId) => {
        const s = await o.secrets(orgId, TOOL_SIGNING_SECRET);
        return s ? [s] : [];
      },
    });
  }

  /** The session's agent with its overrides, or null when the session names none (or it was deleted). */
  async loadSessionAgent(db: Db, orgId: string, aiAgent: { id: string; overrides?: Record<string, unknown> } | null): Promise<AgentDefinition | null> {
    if (!aiAgent) return null;
    const [row, allowedOverrides] = await Promise.all([getAgent(db, orgId, aiAgent.id), orgAllowedOverrides(db, orgId)]);
    if (!row) return null;
    return resolveAgent(row, aiAgent.overrides, allowedOverrides);
  }

  brainFor(agent: AgentDefinition, mode: string): Brain {
    if (agent.brain.provider === 'openai_compatible') {
      const kb =
        mode === 'help_chat_voice' && agent.knowledgeBase.length
          ? `Answer from these help articles only:\n${agent.knowledgeBase.map((a) => `## ${a.title}\n${a.content}`).join('\n\n')}`
          : undefined;
      return new OpenAiCompatibleBrain({ agent, secrets: this.o.secrets, timeoutMs: this.o.llmTimeoutMs, context: kb });
    }
    return mode === 'help_chat_voice' ? new HelpDeskBrain(agent) : new ScriptedBrain(agent);
  }

  runtime(agent: AgentDefinition, mode: string, host: AgentHost, log?: Logger): AgentRuntime {
    return new AgentRuntime({
      agent,
      brain: this.brainFor(agent, mode),
      host,
      tools: this.tools,
      fillerAfterMs: this.o.fillerAfterMs,
      speakBeforeFinal: this.o.earlySpeak ?? false,
      log,
    });
  }
}

/** Interim secret resolver: named secrets from configuration (`agents.secrets`, AGENT_SECRETS), for every organization. */
export function configSecretResolver(secrets: Record<string, string>): SecretResolver {
  return async (_orgId, name) => secrets[name] ?? null;
}
