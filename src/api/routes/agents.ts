// /v1/agents: the AI voice agents an organization defines for ai_agent and
// help_chat_voice sessions. Cursor pagination on time-ordered ids.
import { deleteAgent, getAgent, insertAgent, listAgents, updateAgent, type AgentValues } from '../../store/index.js';
import { ApiError } from '../errors.js';
import { authOf, type ApiApp, type ApiDeps } from '../context.js';
import { IdParams, ListOf, PageQuery, voiceWithDefaults, withAuthErrors } from '../schemas/common.js';
import { AgentDeleted, AgentObject, CreateAgentBody, UpdateAgentBody, type AgentInput } from '../schemas/agents.js';
import { checkMetadata } from '../schemas/checks.js';
import { checkAgentFields } from '../schemas/agent-checks.js';
import { pageRequest } from './paging.js';
import { presentAgent, presentList } from './present.js';

const notFound = (id: string) => new ApiError('agent_not_found', { param: 'agent_id', message: `No agent '${id}' in this organization.` });

type ToolLike = { name: string; parameters: Record<string, unknown> };
type IntentLike = { name: string; tool?: string };

function toValues(input: AgentInput): AgentValues {
  const values = { ...input } as AgentValues;
  if (input.voice) values.voice = voiceWithDefaults(input.voice) as unknown as Record<string, unknown>;
  return values;
}

export default async function agentRoutes(app: ApiApp, deps: ApiDeps): Promise<void> {
  const limits = { metadataMaxKeys: deps.config.limits.metadataMaxKeys, metadataMaxBytes: deps.config.limits.metadataMaxBytes };
  const metaLimits = { maxKeys: limits.metadataMaxKeys, maxBytes: limits.metadataMaxBytes };
  const writeErrors = withAuthErrors({ 400: ['invalid_request', 'validation_error'] });

  app.get(
    '/v1/agents',
    {
      config: { scope: 'agents:read' },
      schema: {
        tags: ['agents'],
        summary: 'List agents',
        description: 'Scope agents:read. Ascending creation (id) order.',
        querystring: PageQuery,
        response: { 200: ListOf(AgentObject, 'Agents of the organization.'), ...withAuthErrors({ 400: ['invalid_request'] }) },
      },
    },
    async (req) => {
      const page = pageRequest(req.query);
      return presentList('/v1/agents', await listAgents(deps.db, authOf(req).orgId, page), presentAgent);
    },
  );

  app.post(
    '/v1/agents',
    {
      config: { scope: 'agents:write', idempotent: true },
      schema: {
        tags: ['agents'],
        summary: 'Create an agent',
        description: 'Scope agents:write. Honours Idempotency-Key.',
        body: CreateAgentBody(limits),
        response: { 201: AgentObject, ...writeErrors, 409: withAuthErrors({ 409: ['idempotency_conflict'] })[409] },
      },
    },
    async (req, reply) => {
      const body = req.body;
      checkAgentFields(body, body.tools);
      checkMetadata('metadata', body.metadata, metaLimits);
      const row = await insertAgent(deps.db, authOf(req).orgId, toValues(body) as AgentValues & { name: string });
      reply.code(201);
      return presentAgent(row);
    },
  );

  app.get(
    '/v1/agents/:id',
    {
      config: { scope: 'agents:read' },
      schema: {
        tags: ['agents'],
        summary: 'Retrieve an agent',
        description: 'Scope agents:read.',
        params: IdParams,
        response: { 200: AgentObject, ...withAuthErrors({ 404: ['agent_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const row = await getAgent(deps.db, authOf(req).orgId, id);
      if (!row) throw notFound(id);
      return presentAgent(row);
    },
  );

  app.patch(
    '/v1/agents/:id',
    {
      config: { scope: 'agents:write' },
      schema: {
        tags: ['agents'],
        summary: 'Update an agent',
        description: 'Scope agents:write. Only the given fields change; null clears a nullable field; arrays and objects are replaced.',
        params: IdParams,
        body: UpdateAgentBody(limits),
        response: { 200: AgentObject, ...withAuthErrors({ 400: ['invalid_request', 'validation_error'], 404: ['agent_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const body = req.body;
      const existing = await getAgent(deps.db, authOf(req).orgId, id);
      if (!existing) throw notFound(id);
      // Intent → tool references are checked against the agent as it will be after the change.
      const tools = (body.tools ?? existing.tools) as ToolLike[];
      const intents = body.intents ?? (body.tools ? (existing.intents as IntentLike[]) : undefined);
      checkAgentFields({ language: body.language, brain: body.brain, tools: body.tools, intents }, tools);
      checkMetadata('metadata', body.metadata, metaLimits);
      const row = await updateAgent(deps.db, authOf(req).orgId, id, toValues(body));
      if (!row) throw notFound(id);
      return presentAgent(row);
    },
  );

  app.delete(
    '/v1/agents/:id',
    {
      config: { scope: 'agents:write' },
      schema: {
        tags: ['agents'],
        summary: 'Delete an agent',
        description: 'Scope agents:write.',
        params: IdParams,
        response: { 200: AgentDeleted, ...withAuthErrors({ 404: ['agent_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      if (!(await deleteAgent(deps.db, authOf(req).orgId, id))) throw notFound(id);
      return { id, object: 'agent' as const, deleted: true as const };
    },
  );
}
