// Telephony failures the API maps to its catalog (SPEC.md "Errors"); codes are catalog codes.
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
  | 'validation_error';

export class TelephonyError extends Error {
  constructor(readonly code: TelephonyErrorCode, message: string, readonly sipStatus?: number) {
    super(message);
    this.name = 'TelephonyError';
  }
}
