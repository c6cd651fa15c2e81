// RTP source validation: which source address an endpoint takes media from.
//
// Latching to "whoever sends first" lets a third party that guesses the port hijack the call's
// audio (its packets latch, the caller's are then ignored). The rules here:
// - The source signalled in the peer's SDP (c= address, m= port) is always accepted, and it wins:
//   when it shows up it takes the latch over from any NAT guess.
// - 'signalled': nothing else is accepted.
// - 'nat' (symmetric RTP for peers behind NAT, RFC 4961 / common SBC practice): another source may
//   latch only within the first NAT_WINDOW_PACKETS packets after the SDP, only of the same address
//   family, and only from the SDP's own address (NAT rewrote the port) unless the SDP address is
//   private (RFC 1918, RFC 6598 shared, link-local, ULA), in which case the phone could not know
//   its public address and any address of that family is a candidate.
// Everything else is a stray: counted by the caller and ignored.
import net from 'node:net';

export type LatchingMode = 'signalled' | 'nat';
export type LatchVerdict = 'accept' | 'latched' | 'ignore';

/** Packets after an SDP within which a NAT source may latch. */
export const NAT_WINDOW_PACKETS = 10;

export function isPrivateAddress(address: string): boolean {
  if (net.isIPv4(address)) {
    const [a = -1, b = -1] = address.split('.').map(Number); // isIPv4: four parts
    return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254);
  }
  const v6 = address.toLowerCase();
  return v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe80');
}

export class SourceLatch {
  private signalledAddress: string | null = null;
  private signalledPort = 0;
  private current: { address: string; port: number } | null = null;
  private latchedToSignalled = false;
  private packetsSinceSignal = 0;

  constructor(readonly mode: LatchingMode) {}

  /** The source media is taken from, once one was accepted. */
  get latched(): { address: string; port: number } | null {
    return this.current;
  }

  /**
   * The latch is on the signalled source, and nothing else can take it until the next signal(): the
   * socket may then leave the other sources to the kernel (RtpEndpoint connects it).
   */
  get settled(): boolean {
    return this.latchedToSignalled;
  }

  /** A (new) remote description: validation starts over against it. */
  signal(address: string, port: number): void {
    this.signalledAddress = address;
    this.signalledPort = port;
    this.current = null;
    this.latchedToSignalled = false;
    this.packetsSinceSignal = 0;
  }

  /** Decides about one packet from `address:port`; 'latched' means the latch moved to it. */
  accept(address: string, port: number): LatchVerdict {
    this.packetsSinceSignal++;
    const cur = this.current;
    if (cur && cur.address === address && cur.port === port) return 'accept';
    if (address === this.signalledAddress && port === this.signalledPort) {
      this.current = { address, port };
      this.latchedToSignalled = true;
      return 'latched';
    }
    if (this.latchedToSignalled || this.mode === 'signalled' || this.signalledAddress === null) return 'ignore';
    if (this.packetsSinceSignal > NAT_WINDOW_PACKETS || cur) return 'ignore';
    if (net.isIP(address) !== net.isIP(this.signalledAddress)) return 'ignore';
    if (address !== this.signalledAddress && !isPrivateAddress(this.signalledAddress)) return 'ignore';
    this.current = { address, port };
    return 'latched';
  }
}
