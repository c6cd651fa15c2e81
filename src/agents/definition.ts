// An agent as a session uses it: the `agt_` row with the session's ai_agent.overrides applied. The
// API checked each override key against the organization's allowed_overrides when the session was
// created; they are filtered again here so a policy tightened since then still holds.
import type { AgentRow } from '../store/index.js';
import type { AgentArticle, AgentBrainConfig, AgentDefinition, AgentEscalation, AgentIntent, AgentTool } from './types.js';

export function resolveAgent(row: AgentRow, overrides: Record<string, unknown> | undefined, allowedOverrides: readonly string[]): AgentDefinition {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(overrides ?? {})) if (allowedOverrides.includes(k)) o[k] = v;
  const pick = <T>(key: string, base: unknown): T => (key in o ? o[key] : base) as T;
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    language: pick<string | null>('language', row.language),
    greeting: pick<string | null>('greeting', row.greeting),
    instructions: pick<string | null>('instructions', row.instructions),
    brain: pick<AgentBrainConfig>('brain', row.brain ?? { provider: 'scripted' }),
    intents: pick<AgentIntent[]>('intents', row.intents ?? []),
    tools: pick<AgentTool[]>('tools', row.tools ?? []),
    escalation: pick<AgentEscalation | null>('escalation', row.escalation),
    knowledgeBase: pick<AgentArticle[]>('knowledge_base', row.knowledge_base ?? []),
    voice: pick<Record<string, unknown> | null>('voice', row.voice),
  };
}
