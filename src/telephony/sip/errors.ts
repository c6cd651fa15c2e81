// A SIP failure carried as a value: the final response status and reason (drachtio-srf style).
export class SipError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(`${status} ${reason}`);
    this.name = 'SipError';
  }
}

/** Methods this user agent serves; anything else is answered 405 with this Allow list (RFC 3261 §21.4.6). */
export const ALLOWED_METHODS = ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'INFO'] as const;
export const ALLOW_HEADER = ALLOWED_METHODS.join(', ');
