// Every failure leaves in the SPEC's error shape with the request id: thrown ApiErrors, schema
// validation, malformed JSON, wrong content type, unknown routes and unexpected exceptions.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, type ErrorCode } from '../errors.js';
import { TelephonyError } from '../../telephony/index.js';
import { SessionEndedError, SessionNotFoundError } from '../../sessions/index.js';

type AjvError = NonNullable<FastifyError['validation']>[number];

/**
 * The error to report out of ajv's list. Unions (nullable fields, metadata values) make ajv report
 * every branch; the most specific complaint is the deepest one, and where all of those are type
 * mismatches the allowed types are combined ("must be string, number, boolean or null").
 */
function primaryError(list: AjvError[]): { error: AjvError; types?: string[]; allowed?: unknown[] } {
  const first = list[0];
  if (!first) throw new Error('primaryError: a validation failure with an empty ajv error list');
  if (!list.some((e) => e.keyword === 'anyOf')) return { error: first };
  const candidates = list.filter((e) => e.keyword !== 'anyOf');
  if (candidates.length === 0) return { error: first };
  const depth = (e: AjvError) => (e.instancePath.match(/\//g) ?? []).length;
  const deepest = Math.max(...candidates.map(depth));
  const atDeepest = candidates.filter((e) => depth(e) === deepest);
  const head = atDeepest[0];
  if (!head) return { error: first };
  // `same` starts with `head`, so head is its first element.
  const same = atDeepest.filter((e) => e.instancePath === head.instancePath);
  if (same.every((e) => e.keyword === 'type')) {
    return { error: head, types: [...new Set(same.map((e) => String((e.params as { type?: string }).type)))] };
  }
  // A union of literals (consent_status) fails every branch: name every allowed value, not the first.
  if (same.every((e) => e.keyword === 'const')) {
    return { error: head, allowed: same.map((e) => (e.params as { allowedValue?: unknown }).allowedValue) };
  }
  return { error: head };
}

/** Turns an ajv validation error into the field path a client sent (`voice.speed`, `routing.sip.headers.Foo`). */
function paramOf(err: FastifyError): string | undefined {
  if (!err.validation?.length) return undefined;
  const v = primaryError(err.validation).error;
  const base = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const missing =
    (v.params as { missingProperty?: string; additionalProperty?: string }).missingProperty ?? (v.params as { additionalProperty?: string }).additionalProperty;
  const field = missing ? (base ? `${base}.${missing}` : missing) : base;
  return field || undefined;
}

const joinTypes = (types: string[]): string => (types.length > 1 ? `${types.slice(0, -1).join(', ')} or ${types[types.length - 1] ?? ''}` : (types[0] ?? ''));

function validationMessage(err: FastifyError, param: string | undefined): string {
  if (!err.validation?.length) return err.message;
  const { error: v, types, allowed } = primaryError(err.validation);
  const where = param ?? err.validationContext ?? 'request';
  if (types) return `'${where}' must be ${joinTypes(types)}.`;
  if (allowed) return `'${where}' must be one of: ${allowed.map(String).join(', ')}.`;
  if (v.keyword === 'required') return `Missing required field '${param}'.`;
  if (v.keyword === 'additionalProperties') return `Unknown field '${param}'.`;
  if (v.keyword === 'enum') return `'${where}' must be one of: ${((v.params as { allowedValues?: unknown[] }).allowedValues ?? []).join(', ')}.`;
  if (v.keyword === 'const') return `'${where}' must be ${JSON.stringify((v.params as { allowedValue?: unknown }).allowedValue)}.`;
  return `'${where}' ${v.message ?? 'is invalid'}.`;
}

const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * PostgreSQL or Redis out of reach (SPEC "Errors": 503 service_unavailable, retry with backoff):
 * socket errors, SQLSTATE classes 08 (connection), 53 (insufficient resources) and 57P0x
 * (shutdown), and ioredis giving up on a command.
 */
export function isDependencyOutage(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_ERRORS.has(code) || /^(08|53|57P0)/.test(code))) return true;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  return /Connection terminated|Connection is closed|timeout exceeded when trying to connect|enableOfflineQueue/i.test(err.message ?? '');
}

/** Errors of the planes below the API carry catalog codes; this is the one place they become HTTP. */
function fromPlaneError(err: Error): ApiError | null {
  if (err instanceof TelephonyError) {
    const param = err.detail.param ?? (err.code === 'session_not_found' ? 'session_id' : undefined);
    const retryAfter = err.detail.retryAfterSeconds;
    return new ApiError(err.code, { param, message: err.message, extra: err.detail.extra, ...(retryAfter ? { retryAfter } : {}) });
  }
  if (err instanceof SessionNotFoundError) return new ApiError('session_not_found', { param: 'session_id' });
  if (err instanceof SessionEndedError) return new ApiError('session_already_ended', { param: 'session_id' });
  return null;
}

export function toApiError(err: FastifyError | ApiError | Error, contentType?: string): ApiError {
  if (err instanceof ApiError) return err;
  const mapped = fromPlaneError(err);
  if (mapped) return mapped;
  const fe = err as FastifyError;
  if (fe.validation) {
    const param = paramOf(fe);
    return new ApiError('invalid_request', { param, message: validationMessage(fe, param) });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_request', {
        message: `Content-Type must be application/json${contentType ? `, not ${(contentType.split(';')[0] ?? '').trim().slice(0, 100)}` : ''}.`,
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', { message: 'The JSON body is empty.' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('invalid_request', { message: 'The request body is too large.' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', { message: 'Content-Length does not match the body.' });
  }
  if (fe.statusCode === 400 && err instanceof SyntaxError) {
    return new ApiError('invalid_request', { message: `The body is not valid JSON: ${err.message}` });
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError('invalid_request', { message: fe.message });
  }
  if (isDependencyOutage(err)) return new ApiError('service_unavailable');
  return new ApiError('internal_error');
}

/** The resource a /v1/{collection}/{id} route addresses, with its 404 code and the param its handler names. */
const RESOURCE_NOT_FOUND: Record<string, { code: ErrorCode; param: string }> = {
  sessions: { code: 'session_not_found', param: 'session_id' },
  recordings: { code: 'recording_not_found', param: 'recording_id' },
  analyses: { code: 'analysis_not_found', param: 'analysis_id' },
  agents: { code: 'agent_not_found', param: 'agent_id' },
  webhook_endpoints: { code: 'webhook_endpoint_not_found', param: 'id' },
};

/**
 * An id the path schema refuses (over-long, empty) names no resource that exists: SPEC answers
 * 404 with the resource's `…_not_found` code, the same as for a well-formed unknown id.
 */
function unknownIdError(err: FastifyError, routeUrl: string | undefined): ApiError | null {
  if (!err.validation || err.validationContext !== 'params' || !routeUrl) return null;
  return notFoundUnder(routeUrl);
}

function notFoundUnder(path: string): ApiError | null {
  const collection = /^\/v1\/([a-z_]+)\/[^/]+/.exec(path)?.[1];
  const resource = collection ? RESOURCE_NOT_FOUND[collection] : undefined;
  return resource ? new ApiError(resource.code, { param: resource.param }) : null;
}

/**
 * Fastify's router refuses a path segment over `routerOptions.maxParamLength` (414) or a URL it
 * cannot decode (400) before any route or hook runs, in its own body shape. Those become the SPEC
 * shape: the resource's 404 under a /v1 collection (no such id can exist), route_not_found elsewhere.
 */
export function frameworkErrorHandler(_err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-ID', req.id);
  const path = req.url.split('?')[0] ?? req.url;
  void sendApiError(req, reply, notFoundUnder(path) ?? new ApiError('route_not_found', { message: 'No such route.' }));
}

export function sendApiError(req: FastifyRequest, reply: FastifyReply, apiErr: ApiError): FastifyReply {
  if (apiErr.retryAfter !== undefined) reply.header('Retry-After', String(apiErr.retryAfter));
  for (const [k, v] of Object.entries(apiErr.headers ?? {})) reply.header(k, v);
  return reply.code(apiErr.statusCode).type('application/json; charset=utf-8').send(apiErr.body(req.id));
}

async function errorsPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const apiErr = unknownIdError(err, req.routeOptions.url) ?? toApiError(err, req.headers['content-type']);
    if (apiErr.statusCode >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ code: apiErr.code, status: apiErr.statusCode }, 'request refused');
    return sendApiError(req, reply, apiErr);
  });
  app.setNotFoundHandler((req, reply) =>
    sendApiError(req, reply, new ApiError('route_not_found', { message: `No route ${req.method} ${req.url.split('?')[0]}.` })),
  );
}

export default fp(errorsPlugin, { name: 'voxbridge-errors' });
