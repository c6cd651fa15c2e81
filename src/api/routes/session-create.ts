// POST /v1/sessions: every create rule of SPEC "Create-session request fields", in the order a
// client would want to hear about them: request shape, mode, languages, agent rules, metadata,
// engine capability, routing, then the organization's concurrent-session limit.
import type { Static } from '@sinclair/typebox';
import { newId } from '../../ids.js';
import { issueStreamToken, revokeStreamToken } from '../../coord/index.js';
import { resolveRouting } from '../../telephony/index.js';
import { getAgent, insertSessionWithinLimit, type NewSession } from '../../store/index.js';
import { ApiError } from '../errors.js';
import type { ApiDeps, AuthContext } from '../context.js';
import type { EngineCapabilities } from '../../speech/index.js';
import { checkLanguage, checkMetadata } from '../schemas/checks.js';
import { checkAgentFields } from '../schemas/agent-checks.js';
import { voiceWithDefaults } from '../schemas/common.js';
import type { CreateSessionInput, SessionCreated } from '../schemas/sessions.js';
import { presentCreatedSession, streamUrl } from './present.js';
import { isSessionMode, planPipeline, SESSION_MODES, TRANSLATION_MODES, type SessionMode } from '../../sessions/index.js';

/** How long a client should wait before retrying when the organization is at its session limit. */
export const CONCURRENT_LIMIT_RETRY_AFTER_SECONDS = 30;

function checkMode(mode: string): SessionMode {
  if (!isSessionMode(mode)) {
    throw new ApiError('unsupported_mode', { param: 'mode', message: `Mode '${mode}' is not supported; use one of: ${SESSION_MODES.join(', ')}.` });
  }
  return mode;
}

/**
 * Refuses a translation session that no configured engine can serve in either direction:
 * the same plan the live pipeline will follow decides it. A session served one way only is accepted;
 * its socket is told which party's speech is not served (`engine_unavailable`) right after connect.
 * Languages left to auto-detection resolve to the default language; when that makes both parties
 * speak one language, the session is accepted as transcription only.
 */
export function checkEngines(engines: EngineCapabilities, mode: SessionMode, src: string | null, tgt: string | null, defaultLanguage: string): void {
  const plan = planPipeline({ mode, source_language: src, target_language: tgt }, engines, defaultLanguage);
  if (Object.keys(plan.routes).length > 0) return;
  if (plan.languages.agent === plan.languages.customer && (plan.defaulted.agent || plan.defaulted.customer)) return;
  const param = !plan.transcribe.agent && src !== null ? 'source_language' : 'target_language';
  throw new ApiError('validation_error', {
    param,
    message: `No configured speech engine can serve this ${mode} session in either direction: ${plan.unavailable.join('; ')}.`,
  });
}

async function checkAiAgent(deps: ApiDeps, auth: AuthContext, body: CreateSessionInput): Promise<void> {
  const agent = body.ai_agent;
  if (TRANSLATION_MODES.has(body.mode)) {
    if (agent !== undefined) throw new ApiError('validation_error', { param: 'ai_agent', message: `'ai_agent' must be omitted in ${body.mode} mode.` });
    return;
  }
  if (body.mode === 'ai_agent' && agent === undefined) {
    throw new ApiError('validation_error', { param: 'ai_agent', message: "'ai_agent' (with an agt_ id) is required in ai_agent mode." });
  }
  if (agent === undefined) return;
  if (!auth.org.features.includes('ai_agent')) throw new ApiError('ai_agent_disabled', { param: 'ai_agent' });
  const row = await getAgent(deps.db, auth.orgId, agent.id);
  if (!row) throw new ApiError('ai_agent_not_found', { param: 'ai_agent.id', message: `No agent '${agent.id}' in this organization.` });
  const overrides = agent.overrides ?? {};
  for (const key of Object.keys(overrides)) {
    if (!auth.org.allowed_overrides.includes(key)) {
      throw new ApiError('override_not_allowed', {
        param: `ai_agent.overrides.${key}`,
        message: `Overriding '${key}' is not allowed by organization policy${auth.org.allowed_overrides.length ? ` (allowed: ${auth.org.allowed_overrides.join(', ')})` : ''}.`,
      });
    }
  }
  const tools = (overrides.tools ?? row.tools) as Array<{ name: string; parameters: Record<string, unknown> }>;
  checkAgentFields(
    { ...overrides, intents: overrides.intents ?? (overrides.tools ? (row.intents as Array<{ name: string; tool?: string }>) : undefined) },
    tools,
    'ai_agent.overrides',
  );
}

export async function createSession(deps: ApiDeps, auth: AuthContext, body: CreateSessionInput): Promise<Static<typeof SessionCreated>> {
  const { config } = deps;
  const mode = checkMode(body.mode);
  checkLanguage('source_language', body.source_language);
  checkLanguage('target_language', body.target_language);
  const src = body.source_language ?? null;
  const tgt = body.target_language ?? null;
  if (TRANSLATION_MODES.has(body.mode) && src && tgt && src === tgt) {
    throw new ApiError('validation_error', {
      param: 'target_language',
      message: `Translation needs two languages; source_language and target_language are both '${src}'.`,
    });
  }
  await checkAiAgent(deps, auth, body);
  checkMetadata('metadata', body.metadata, { maxKeys: config.limits.metadataMaxKeys, maxBytes: config.limits.metadataMaxBytes });
  if (TRANSLATION_MODES.has(body.mode)) {
    // The organization's own engines when it chose some (`admin org update --stt …`), else the node's.
    const engines = deps.enginesFor ? await deps.enginesFor(auth.orgId) : deps.engines;
    if (engines) checkEngines(engines, mode, src, tgt, config.engines.stt.defaultLanguage);
  }

  const route = await resolveRouting(deps.db, auth.org, body.routing, { docsUrl: `${config.publicUrl}/v1/openapi.json#/paths/~1v1~1sessions/post` });

  const consentRequired = body.recording?.consent_required ?? false;
  const recording = {
    enabled: body.recording?.enabled ?? false,
    mode: body.recording?.mode ?? 'dual_channel',
    consent_required: consentRequired,
    consent_status: body.recording?.consent_status ?? (consentRequired ? 'pending' : 'not_required'),
  };
  const session: NewSession = {
    id: newId('sess'),
    orgId: auth.orgId,
    apiKeyId: auth.keyId,
    mode: body.mode,
    configurationMode: body.configuration_mode ?? null,
    sourceLanguage: src,
    targetLanguage: tgt,
    provider: route.provider,
    phoneNumber: route.phoneNumber ?? null,
    connectionId: route.connectionId ?? null,
    routing: body.routing ?? null,
    audio: { sample_rate_hz: body.audio?.sample_rate_hz ?? 8000, encoding: body.audio?.encoding ?? 'mulaw', channels: body.audio?.channels ?? 1 },
    voice: voiceWithDefaults(body.voice) as unknown as Record<string, unknown>,
    recording,
    aiAgent: body.ai_agent ?? null,
    metadata: body.metadata ?? null,
    ownerNode: config.nodeId,
    createdAt: new Date(),
  };
  const createdAt = session.createdAt.toISOString();
  const event = {
    id: session.id,
    object: 'session',
    status: 'created',
    mode: session.mode,
    source_language: src,
    target_language: tgt,
    metadata: session.metadata,
    created_at: createdAt,
  };
  // The token is issued alongside the insert (one round trip each, in parallel) and withdrawn if the insert is refused.
  const [inserted, token] = await Promise.all([
    insertSessionWithinLimit(deps.db, session, event),
    issueStreamToken(deps.redis, session.id, config.limits.streamTokenTtlSeconds),
  ]);
  if (!inserted) {
    await revokeStreamToken(deps.redis, token.token).catch(() => undefined);
    throw new ApiError('concurrent_session_limit', {
      retryAfter: CONCURRENT_LIMIT_RETRY_AFTER_SECONDS,
      message: `This organization already has ${auth.org.max_concurrent_sessions} open sessions (its limit); end one or retry later.`,
    });
  }
  return presentCreatedSession(
    {
      id: session.id,
      status: 'created',
      mode: session.mode,
      configuration_mode: session.configurationMode,
      source_language: src,
      target_language: tgt,
      provider: session.provider,
      phone_number: session.phoneNumber,
      recording,
      metadata: session.metadata,
      created_at: session.createdAt,
    },
    { url: streamUrl(config.publicUrl, session.id), token: token.token, expires_at: token.expiresAt.toISOString() },
  );
}
