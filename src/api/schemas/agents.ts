// Agent resource schemas: the fields of an AI voice agent, validated at the edge.
// Cross-field rules (brain provider needs, intent→tool references, tool parameter schemas) live in agent-checks.ts.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Iso8601, MetadataSchema, VoiceInput, VoiceOutput } from './common.js';

const Nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});

export const Brain = Type.Object(
  {
    provider: Type.Union([Type.Literal('scripted'), Type.Literal('openai_compatible')], {
      description: 'scripted: intents drive the dialogue; openai_compatible: any OpenAI-compatible chat API with tool calling.',
    }),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Required for openai_compatible.' })),
    base_url: Type.Optional(
      Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048, description: 'Required for openai_compatible, e.g. https://api.example.com/v1.' }),
    ),
    api_key_secret: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.-]{1,64}$',
        description:
          'openai_compatible: name of the organization\'s secret holding the API key (README "AI agents"); the key itself is never stored in the agent.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Intent = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }),
    examples: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { minItems: 1, maxItems: 100, description: 'Example phrases a caller may say.' }),
    reply: Type.String({ minLength: 1, maxLength: 4000, description: 'What the agent says when the intent matches.' }),
    tool: Type.Optional(Type.String({ description: 'Name of a tool of this agent to call.' })),
    escalate: Type.Optional(Type.Boolean({ description: 'Hand over to a human after replying.' })),
    end_call: Type.Optional(Type.Boolean({ description: 'End the session after replying.' })),
  },
  { additionalProperties: false },
);

export const Tool = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    description: Type.String({ minLength: 1, maxLength: 1024 }),
    parameters: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments; its type must be "object".' }),
    webhook_url: Type.Optional(Type.String({ pattern: '^https://[^\\s]+$', maxLength: 2048, description: 'HTTPS URL called with the arguments.' })),
  },
  { additionalProperties: false },
);

export const Escalation = Type.Object(
  {
    keywords: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'Phrases that request a human.' }),
    message: Type.String({ minLength: 1, maxLength: 2000, description: 'What the agent says when escalating.' }),
    transfer_to: Type.Optional(Type.String({ pattern: '^(\\+[1-9][0-9]{1,14}|sips?:[^\\s]+)$', description: 'E.164 number or SIP URI to transfer to.' })),
  },
  { additionalProperties: false },
);

export const Article = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    content: Type.String({ minLength: 1, maxLength: 20000 }),
  },
  { additionalProperties: false },
);

/** Fields a session's ai_agent.overrides may carry (each also needs the organization's allowed_overrides). */
export const AgentOverrides = Type.Object(
  {
    greeting: Type.Optional(Type.String({ maxLength: 4000 })),
    instructions: Type.Optional(Type.String({ maxLength: 20000 })),
    voice: Type.Optional(VoiceInput),
    language: Type.Optional(Type.String()),
    brain: Type.Optional(Brain),
    tools: Type.Optional(Type.Array(Tool, { maxItems: 50 })),
    escalation: Type.Optional(Escalation),
    knowledge_base: Type.Optional(Type.Array(Article, { maxItems: 200 })),
    intents: Type.Optional(Type.Array(Intent, { maxItems: 200 })),
  },
  { additionalProperties: false, description: "Per-session agent changes; each key must be listed in the organization's allowed_overrides." },
);

export function AgentFields(limits: { metadataMaxKeys: number; metadataMaxBytes: number }) {
  return {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Nullable(Type.String({ maxLength: 2000 })),
    language: Nullable(Type.String(), 'ISO 639-1 code the agent speaks.'),
    voice: Nullable(VoiceInput, 'Same fields and ranges as a session voice; defaults filled in.'),
    greeting: Nullable(Type.String({ maxLength: 4000 }), 'First thing the agent says.'),
    instructions: Nullable(Type.String({ maxLength: 20000 }), 'System prompt (LLM brains) or notes.'),
    brain: Brain,
    intents: Type.Array(Intent, { maxItems: 200, description: 'Scripted dialogue: matched against what the caller says.' }),
    tools: Type.Array(Tool, { maxItems: 50 }),
    escalation: Nullable(Escalation),
    knowledge_base: Type.Array(Article, { maxItems: 200, description: 'Help-desk articles the agent may answer from.' }),
    metadata: Type.Union([MetadataSchema(limits.metadataMaxKeys, limits.metadataMaxBytes), Type.Null()]),
  };
}

export function CreateAgentBody(limits: { metadataMaxKeys: number; metadataMaxBytes: number }) {
  const f = AgentFields(limits);
  return Type.Object(
    {
      name: f.name,
      description: Type.Optional(f.description),
      language: Type.Optional(f.language),
      voice: Type.Optional(f.voice),
      greeting: Type.Optional(f.greeting),
      instructions: Type.Optional(f.instructions),
      brain: Type.Optional(Type.Object(f.brain.properties, { additionalProperties: false, description: 'Default {"provider":"scripted"}.' })),
      intents: Type.Optional(f.intents),
      tools: Type.Optional(f.tools),
      escalation: Type.Optional(f.escalation),
      knowledge_base: Type.Optional(f.knowledge_base),
      metadata: Type.Optional(f.metadata),
    },
    { additionalProperties: false },
  );
}

export function UpdateAgentBody(limits: { metadataMaxKeys: number; metadataMaxBytes: number }) {
  const create = CreateAgentBody(limits);
  return Type.Partial(create, {
    additionalProperties: false,
    minProperties: 1,
    description: 'Fields to change; null clears a nullable field; arrays are replaced.',
  });
}

export type AgentInput = Partial<Static<ReturnType<typeof CreateAgentBody>>>;
export type BrainInput = Static<typeof Brain>;

const NullableOut = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const AgentObject = Type.Object({
  id: Type.String({ description: 'agt_…' }),
  object: Type.Literal('agent'),
  name: Type.String(),
  description: NullableOut(Type.String()),
  language: NullableOut(Type.String()),
  voice: NullableOut(VoiceOutput),
  greeting: NullableOut(Type.String()),
  instructions: NullableOut(Type.String()),
  brain: Brain,
  intents: Type.Array(Intent),
  tools: Type.Array(Tool),
  escalation: NullableOut(Escalation),
  knowledge_base: Type.Array(Article),
  metadata: Type.Union([Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])), Type.Null()]),
  created_at: Iso8601('Creation time.'),
  updated_at: Iso8601('Last change.'),
});

export const AgentDeleted = Type.Object({ id: Type.String(), object: Type.Literal('agent'), deleted: Type.Literal(true) });
