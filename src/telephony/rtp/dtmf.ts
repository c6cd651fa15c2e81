// RFC 4733 telephone-events (DTMF) over RTP.
// Payload (§2.3): event (8 bits) | E (1) | R (1) | volume (6) | duration (16, timestamp units).

const DIGITS = '0123456789*#ABCD';

export function digitToEvent(d: string): number {
  const i = DIGITS.indexOf(d.toUpperCase());
  if (i < 0) throw new RangeError(`not a DTMF digit: ${d}`);
  return i;
}

export function eventToDigit(e: number): string | null {
  return DIGITS[e] ?? null;
}

export interface TelephoneEvent {
  event: number;
  end: boolean;
  volume: number;
  duration: number;
}

export function parseTelephoneEvent(p: Uint8Array): TelephoneEvent | null {
  if (p.length < 4) return null;
  // Four bytes checked above.
  return { event: p[0] ?? 0, end: ((p[1] ?? 0) & 0x80) !== 0, volume: (p[1] ?? 0) & 0x3f, duration: ((p[2] ?? 0) << 8) | (p[3] ?? 0) };
}

export function writeTelephoneEvent(out: Uint8Array, offset: number, e: TelephoneEvent): void {
  out[offset] = e.event;
  out[offset + 1] = (e.end ? 0x80 : 0) | (e.volume & 0x3f);
  out[offset + 2] = (e.duration >> 8) & 0xff;
  out[offset + 3] = e.duration & 0xff;
}

export interface DigitDetected {
  digit: string;
  /** Duration in ms when the end was seen, else null (reported at the start). */
  durationMs: number | null;
}

/**
 * Turns a stream of telephone-event packets into digits, each reported once.
 * A new event is recognised by a new RTP timestamp (§2.5.1.2: all packets of one event share the
 * timestamp of its start), not by the marker bit, which some senders omit or set on every packet.
 * End-bit retransmissions (§2.5.1.4, usually three) carry the same timestamp and are ignored.
 */
export class DtmfDecoder {
  private currentTs = -1;
  private reported = false;

  /** Returns the digit when this packet starts a new event, otherwise null. */
  push(timestamp: number, payload: Uint8Array): DigitDetected | null {
    const ev = parseTelephoneEvent(payload);
    if (!ev) return null;
    const digit = eventToDigit(ev.event);
    if (!digit) return null;
    if (timestamp === this.currentTs && this.reported) return null;
    this.currentTs = timestamp;
    this.reported = true;
    return { digit, durationMs: ev.end ? ev.duration / 8 : null };
  }
}

/** Packets that send one digit: a start with marker, updates every 20 ms, then three end packets. */
export function digitPackets(digit: string, durationMs = 100, volume = 10): { marker: boolean; payload: Uint8Array }[] {
  const event = digitToEvent(digit);
  const total = Math.max(40, durationMs) * 8;
  const out: { marker: boolean; payload: Uint8Array }[] = [];
  for (let d = 160; d < total; d += 160) {
    const p = new Uint8Array(4);
    writeTelephoneEvent(p, 0, { event, end: false, volume, duration: d });
    out.push({ marker: out.length === 0, payload: p });
  }
  for (let i = 0; i < 3; i++) {
    const p = new Uint8Array(4);
    writeTelephoneEvent(p, 0, { event, end: true, volume, duration: total });
    out.push({ marker: false, payload: p });
  }
  return out;
}
