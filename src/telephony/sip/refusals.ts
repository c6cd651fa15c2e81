// Counts what the SIP front refused (hostile or malformed input, connection limits, scanners,
// floods) and logs it without letting a flood flood the log: at most `perSecond` lines a second,
// then one line saying how many were not logged.
import type { SipLogger } from './user-agent.js';

export interface RefusedSource {
  address: string;
  port: number;
  protocol: string;
}

export class RefusalCounter {
  readonly counts: Record<string, number> = {};
  private windowStart = 0;
  private loggedInWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly log: SipLogger,
    private readonly perSecond = 10,
  ) {}

  record(fault: string, source: RefusedSource, detail?: string): void {
    this.counts[fault] = (this.counts[fault] ?? 0) + 1;
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      if (this.suppressed > 0) this.log.warn({ suppressed: this.suppressed }, 'sip input refused (log lines suppressed)');
      this.windowStart = now;
      this.loggedInWindow = 0;
      this.suppressed = 0;
    }
    if (this.loggedInWindow >= this.perSecond) {
      this.suppressed++;
      return;
    }
    this.loggedInWindow++;
    this.log.warn({ fault, source: `${source.protocol} ${source.address}:${source.port}`, detail }, 'sip input refused');
  }
}
