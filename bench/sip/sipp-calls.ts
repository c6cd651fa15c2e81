// A burst of short SIPp calls (INVITE → 200 → ACK → BYE) at `rate` per second against a fixture's
// open number: the unit of work of the call-setup benches.
import { runSipp, type SippResult, type TelephonyFixture } from '../../test/helpers/sip-harness.js';

export function placeCalls(fx: TelephonyFixture, o: { calls: number; rate: number; timeoutSeconds: number }): Promise<SippResult> {
  return runSipp({
    scenario: 'uac-call.xml',
    target: `127.0.0.1:${fx.sipPort}`,
    service: fx.openNumber,
    calls: o.calls,
    rate: o.rate,
    rateLimit: o.calls,
    durationMs: 0,
    timeoutSeconds: o.timeoutSeconds,
    // A large socket buffer for the load generator too: its own drops would be counted against the gateway.
    extra: ['-max_socket', '60000', '-buff_size', '4194304'],
  });
}
