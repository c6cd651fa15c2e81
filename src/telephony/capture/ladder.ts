// A ladder (sequence) diagram of one call's captured SIP messages, in plain ASCII: one column per
// endpoint (address:port, in order of first appearance), one arrow per message with its method or
// status and the time since the first message.
import type { SipMessageRow } from '../../store/index.js';

const LANE = 30;
const LEFT = 12;

function label(r: SipMessageRow): string {
  const reason = r.status !== null ? (/^SIP\/2\.0 \d{3} ([^\r\n]*)/.exec(r.raw)?.[1] ?? '') : '';
  const sdp = /\r\n\r\n\s*v=0/.test(r.raw) ? ' (SDP)' : '';
  const text = r.method ?? `${r.status ?? '?'} ${reason}`.trim();
  return `${text}${sdp}`;
}

/** Renders the ladder; `rows` in capture order (getSipTrace). */
export function renderLadder(rows: SipMessageRow[]): string {
  const first = rows[0];
  if (!first) return '(no SIP messages captured for this call)\n';
  const endpoints: string[] = [];
  const col = (address: string, port: number): number => {
    const key = `${address}:${port}`;
    let i = endpoints.indexOf(key);
    if (i < 0) i = endpoints.push(key) - 1;
    return i;
  };
  const arrows = rows.map((r) => ({ r, from: col(r.src_address, r.src_port), to: col(r.dst_address, r.dst_port) }));
  const x = (i: number): number => LEFT + i * LANE;
  const width = x(endpoints.length - 1) + 1;
  const blank = (): string[] => {
    const line = new Array<string>(width).fill(' ');
    for (let i = 0; i < endpoints.length; i++) line[x(i)] = '|';
    return line;
  };
  const out: string[] = [`Call-ID: ${first.call_id}`, `Start:   ${first.captured_at.toISOString()}`, ''];
  const head = new Array<string>(width + LANE).fill(' ');
  endpoints.forEach((e, i) => {
    const start = Math.max(0, x(i) - Math.floor(e.length / 2));
    for (let k = 0; k < e.length; k++) head[start + k] = e.charAt(k);
  });
  out.push(head.join('').trimEnd(), blank().join('').trimEnd());
  const t0 = first.captured_at.getTime();
  for (const { r, from, to } of arrows) {
    const line = blank();
    const offset = `+${((r.captured_at.getTime() - t0) / 1000).toFixed(3)}s`;
    for (let k = 0; k < offset.length && k < LEFT - 1; k++) line[k] = offset.charAt(k);
    const text = ` ${label(r)} `;
    if (from === to) {
      const s = `${text.trim()} (to itself)`;
      for (let k = 0; k < s.length && x(from) + 2 + k < width; k++) line[x(from) + 2 + k] = s.charAt(k);
    } else {
      const a = Math.min(x(from), x(to));
      const b = Math.max(x(from), x(to));
      for (let k = a + 1; k < b; k++) line[k] = '-';
      if (from < to) line[b - 1] = '>';
      else line[a + 1] = '<';
      // The label sits in the middle of the arrow; a long one is cut to fit.
      const room = b - a - 4;
      const shown = text.length > room ? `${text.slice(0, room - 1)} ` : text;
      const start = a + 2 + Math.floor((room - shown.length) / 2);
      for (let k = 0; k < shown.length; k++) line[start + k] = shown.charAt(k);
    }
    out.push(`${line.join('').trimEnd()}  ${r.transport}`);
  }
  return `${out.join('\n')}\n`;
}
