// The error catalog (SPEC.md "Errors"): every error the API returns is declared once here and
// thrown by code. The catalog is the documentation; GET /v1/openapi.json lists it too.

export type ErrorType =
  | 'authentication_error'
  | 'permission_error'
  | 'invalid_request_error'
  | 'conflict_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'api_error'
  | 'validation_error';

interface CatalogEntry {
  type: ErrorType;
  status: number;
  message: string;
}

export const ERROR_CATALOG = {
  api_key_invalid: { type: 'authentication_error', status: 401, message: 'The API key is missing, malformed or unknown.' },
  api_key_expired: { type: 'authentication_error', status: 401, message: 'The API key has expired.' },
  api_key_revoked: { type: 'authentication_error', status: 401, message: 'The API key has been revoked.' },
  api_key_wrong_environment: { type: 'authentication_error', status: 401, message: 'The API key belongs to another environment (live/test).' },
  stream_token_invalid: { type: 'authentication_error', status: 401, message: 'The stream token is invalid or expired.' },
  organization_inactive: { type: 'permission_error', status: 403, message: 'The organization subscription is inactive.' },
  insufficient_api_credits: { type: 'permission_error', status: 402, message: 'No API credits remain for this organization.' },
  insufficient_permissions: { type: 'permission_error', status: 403, message: 'The API key lacks a required scope.' },
  ai_agent_disabled: { type: 'permission_error', status: 403, message: 'AI agent mode is not enabled for this organization.' },
  override_not_allowed: { type: 'permission_error', status: 403, message: 'This AI agent override is not allowed by organization policy.' },
  recording_not_permitted: { type: 'permission_error', status: 403, message: 'Recording access is not permitted by policy.' },
  consent_required: { type: 'permission_error', status: 403, message: 'Recording access requires granted consent.' },
  idempotency_mismatch: { type: 'invalid_request_error', status: 400, message: 'This Idempotency-Key was used with a different request body.' },
  unsupported_mode: { type: 'invalid_request_error', status: 400, message: 'The mode is not supported.' },
  transcript_not_available: { type: 'invalid_request_error', status: 400, message: 'No transcript is available for this session.' },
  validation_error: { type: 'invalid_request_error', status: 400, message: 'The request body is invalid.' },
  invalid_request: { type: 'validation_error', status: 400, message: 'The request is invalid.' },
  invalid_audio_format: { type: 'invalid_request_error', status: 400, message: 'Audio must be mu-law, 8000 Hz, mono.' },
  routing_failed: { type: 'invalid_request_error', status: 400, message: 'Routing could not be resolved.' },
  sip_not_enabled: { type: 'invalid_request_error', status: 400, message: 'SIP routing is not enabled for this organization.' },
  session_not_dialable: { type: 'invalid_request_error', status: 400, message: 'The session cannot dial or hang up in its current state.' },
  no_default_provider: { type: 'invalid_request_error', status: 400, message: 'No provider connection could be resolved for this organization.' },
  phone_number_not_found: { type: 'invalid_request_error', status: 400, message: 'The phone number is not a managed number of this organization.' },
  connection_not_found: { type: 'invalid_request_error', status: 400, message: 'The provider connection does not exist or is inactive.' },
  connection_invalid: { type: 'invalid_request_error', status: 400, message: 'The provider connection credentials are invalid or expired.' },
  session_already_ended: { type: 'conflict_error', status: 409, message: 'The session has already ended.' },
  idempotency_conflict: { type: 'conflict_error', status: 409, message: 'A request with this Idempotency-Key is still processing.' },
  stream_already_connected: { type: 'conflict_error', status: 409, message: 'The session already has an active stream.' },
  session_not_found: { type: 'not_found_error', status: 404, message: 'No such session.' },
  recording_not_found: { type: 'not_found_error', status: 404, message: 'No such recording.' },
  analysis_not_found: { type: 'not_found_error', status: 404, message: 'No such analysis.' },
  agent_not_found: { type: 'not_found_error', status: 404, message: 'No such agent.' },
  ai_agent_not_found: { type: 'not_found_error', status: 404, message: 'The AI agent referenced by the session does not exist.' },
  webhook_endpoint_not_found: { type: 'not_found_error', status: 404, message: 'No such webhook endpoint.' },
  route_not_found: { type: 'not_found_error', status: 404, message: 'No such route.' },
  rate_limit_exceeded: { type: 'rate_limit_error', status: 429, message: 'Too many requests in the current window.' },
  concurrent_session_limit: { type: 'rate_limit_error', status: 429, message: 'Too many sessions are open for this organization.' },
  internal_error: { type: 'api_error', status: 500, message: 'An unexpected error occurred.' },
  service_unavailable: { type: 'api_error', status: 503, message: 'A dependency is unavailable; retry with backoff.' },
  media_server_unavailable: { type: 'api_error', status: 503, message: 'The SIP dialing path is unavailable.' },
  dial_failed: { type: 'api_error', status: 502, message: 'The outbound SIP dial failed.' },
  // Web console sign-in (src/console/).
  sign_in_required: { type: 'authentication_error', status: 401, message: 'Sign in to the console first.' },
  sign_in_failed: { type: 'authentication_error', status: 401, message: 'The email or password is wrong.' },
  sign_in_locked: { type: 'rate_limit_error', status: 429, message: 'Too many failed sign-ins; try again later.' },
  csrf_token_invalid: { type: 'permission_error', status: 403, message: 'The CSRF token is missing or does not match this sign-in.' },
  operator_only: { type: 'permission_error', status: 403, message: 'Only gateway operators may do this.' },
  set_password_token_invalid: { type: 'invalid_request_error', status: 400, message: 'The set-password link is invalid, used or expired.' },
  email_taken: { type: 'conflict_error', status: 409, message: 'A console user with this email already exists.' },
  phone_number_taken: { type: 'conflict_error', status: 409, message: 'This number is already a managed number.' },
  api_key_not_found: { type: 'not_found_error', status: 404, message: 'No such API key.' },
  organization_not_found: { type: 'not_found_error', status: 404, message: 'No such organization.' },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ApiErrorOptions {
  message?: string;
  param?: string;
  retryAfter?: number;
  /** Extra members of the error object (e.g. docs_url on routing_failed). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly type: ErrorType;
  readonly statusCode: number;
  readonly param?: string;
  readonly retryAfter?: number;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, opts: ApiErrorOptions = {}) {
    const entry: CatalogEntry = ERROR_CATALOG[code];
    super(opts.message ?? entry.message);
    this.name = 'ApiError';
    this.code = code;
    this.type = entry.type;
    this.statusCode = entry.status;
    this.param = opts.param;
    this.retryAfter = opts.retryAfter;
    this.extra = opts.extra;
    this.headers = opts.headers;
  }

  body(requestId: string): { error: Record<string, unknown> } {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(this.param !== undefined ? { param: this.param } : {}),
        request_id: requestId,
        ...(this.retryAfter !== undefined ? { retry_after: this.retryAfter } : {}),
        ...this.extra,
      },
    };
  }
}
