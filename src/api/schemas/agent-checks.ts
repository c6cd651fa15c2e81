// Agent rules JSON Schema cannot express: brain requirements per provider, intent → tool references,
// tool parameter schemas that must themselves be valid JSON Schema of type object.
import { Ajv } from 'ajv';
import { ApiError } from '../errors.js';
import { checkLanguage } from './checks.js';
import type { BrainInput } from './agents.js';

// Only used to check tool parameter schemas against the JSON Schema meta-schema.
const metaAjv = new Ajv({ strict: false, validateSchema: true });

interface ToolLike {
  name: string;
  parameters: Record<string, unknown>;
}
interface IntentLike {
  name: string;
  tool?: string;
}

export function checkBrain(param: string, brain: BrainInput | undefined): void {
  if (!brain) return;
  if (brain.provider === 'openai_compatible') {
    if (!brain.model)
      throw new ApiError('validation_error', { param: `${param}.model`, message: `'${param}.model' is required when ${param}.provider is openai_compatible.` });
    if (!brain.base_url)
      throw new ApiError('validation_error', {
        param: `${param}.base_url`,
        message: `'${param}.base_url' is required when ${param}.provider is openai_compatible.`,
      });
  } else {
    for (const f of ['model', 'base_url'] as const) {
      if (brain[f] !== undefined)
        throw new ApiError('validation_error', { param: `${param}.${f}`, message: `'${param}.${f}' only applies to openai_compatible brains.` });
    }
  }
}

export function checkTools(param: string, tools: ToolLike[] | undefined): void {
  if (!tools) return;
  const seen = new Set<string>();
  tools.forEach((tool, i) => {
    if (seen.has(tool.name))
      throw new ApiError('validation_error', { param: `${param}.${i}.name`, message: `Tool names must be unique; '${tool.name}' appears twice.` });
    seen.add(tool.name);
    const p = tool.parameters;
    if (p.type !== 'object') {
      throw new ApiError('validation_error', {
        param: `${param}.${i}.parameters`,
        message: `'${param}.${i}.parameters' must be a JSON Schema with "type": "object".`,
      });
    }
    if (!metaAjv.validateSchema(p)) {
      const first = metaAjv.errors?.[0];
      throw new ApiError('validation_error', {
        param: `${param}.${i}.parameters`,
        message: `'${param}.${i}.parameters' is not a valid JSON Schema: ${first ? `${first.instancePath || '(root)'} ${first.message}` : 'invalid'}.`,
      });
    }
  });
}

export function checkIntents(param: string, intents: IntentLike[] | undefined, tools: ToolLike[] | undefined): void {
  if (!intents) return;
  const toolNames = new Set((tools ?? []).map((t) => t.name));
  const seen = new Set<string>();
  intents.forEach((intent, i) => {
    if (seen.has(intent.name))
      throw new ApiError('validation_error', { param: `${param}.${i}.name`, message: `Intent names must be unique; '${intent.name}' appears twice.` });
    seen.add(intent.name);
    if (intent.tool !== undefined && !toolNames.has(intent.tool)) {
      throw new ApiError('validation_error', {
        param: `${param}.${i}.tool`,
        message: `Intent '${intent.name}' names tool '${intent.tool}', which is not one of the agent's tools.`,
      });
    }
  });
}

/** Every cross-field rule of an agent (or of a session's agent overrides, with `prefix` 'ai_agent.overrides'). */
export function checkAgentFields(
  fields: { language?: string | null; brain?: BrainInput; tools?: ToolLike[]; intents?: IntentLike[] },
  effectiveTools: ToolLike[] | undefined,
  prefix = '',
): void {
  const at = (f: string) => (prefix ? `${prefix}.${f}` : f);
  checkLanguage(at('language'), fields.language);
  checkBrain(at('brain'), fields.brain);
  checkTools(at('tools'), fields.tools);
  checkIntents(at('intents'), fields.intents, effectiveTools);
}
