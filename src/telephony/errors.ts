// Telephony failures with catalog codes (SPEC.md "Errors"): telephony knows no HTTP; the API's
// error plugin (api/plugins/errors.ts) maps them to its catalog by code.
export type TelephonyErrorCode =
  | 'session_not_found'
  | 'session_not_dialable'
  | 'sip_not_enabled'
  | 'dial_failed'
  | 'media_server_unavailable'
  | 'routing_failed'
  | 'no_default_provider'
  | 'connection_not_found'
  | 'connection_invalid'
  | 'phone_number_not_found'
  | 'invalid_request'
  | 'validation_error';

/** Where the fault lies in the client's request, and extra fields for the error body. */
export interface TelephonyErrorDetail {
  param?: string;
  extra?: Record<string, unknown>;
  /** Sent as Retry-After (e.g. a node draining for a restart). */
  retryAfterSeconds?: number;
}

export class TelephonyError extends Error {
  constructor(
    readonly code: TelephonyErrorCode,
    message: string,
    readonly sipStatus?: number,
    readonly detail: TelephonyErrorDetail = {},
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}
