// Why a live session could not be opened; stream/ maps these to close codes (4004, 4010).
export class SessionNotFoundError extends Error {
  readonly code = 'session_not_found';
  constructor(readonly sessionId: string) {
    super(`no such session: ${sessionId}`);
    this.name = 'SessionNotFoundError';
  }
}

export class SessionEndedError extends Error {
  readonly code = 'session_already_ended';
  constructor(readonly sessionId: string) {
    super(`session has already ended: ${sessionId}`);
    this.name = 'SessionEndedError';
  }
}
