// Captured SIP: a search over captured calls and one call's messages as a ladder diagram (one lane
// per address:port in order of first appearance, one arrow per message, its raw text on demand).
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api/client';
import { Empty, Loaded, useLoad, when } from '../components/states';
import './operator.css';

export interface SipMessage {
  captured_at: string;
  call_id: string;
  direction: 'in' | 'out';
  transport: string;
  src_address: string;
  src_port: number;
  dst_address: string;
  dst_port: number;
  method: string | null;
  status: number | null;
  cseq: string;
  raw: string;
}

interface Trace {
  call_id: string;
  call: { id: string; session_id: string; party: string; direction: string; from_uri: string | null; to_uri: string | null; status: string } | null;
  messages: SipMessage[];
  capture_enabled: boolean;
  retention_hours: number;
}

interface CapturedCall {
  call_id: string;
  first_at: string;
  last_at: string;
  messages: number;
  from_user: string | null;
  to_user: string | null;
  session_id: string | null;
}

export const ladderHref = (callId: string): string => `/console/operator/sip?call_id=${encodeURIComponent(callId)}`;

/** What an arrow says: the method, or the status with its reason phrase; "(SDP)" when it carries an offer/answer. */
export function messageLabel(m: SipMessage): string {
  const reason = m.status !== null ? (/^SIP\/2\.0 \d{3} ([^\r\n]*)/.exec(m.raw)?.[1] ?? '') : '';
  const text = m.method ?? `${m.status ?? '?'} ${reason}`.trim();
  return /\r?\n\r?\n\s*v=0/.test(m.raw) ? `${text} (SDP)` : text;
}

/** Lanes (address:port in order of first appearance; `gateway` when this gateway sent or received there) and arrows. */
export function ladderOf(messages: SipMessage[]) {
  const lanes: Array<{ key: string; gateway: boolean }> = [];
  const lane = (address: string, port: number, gateway: boolean): number => {
    const key = `${address}:${port}`;
    let i = lanes.findIndex((l) => l.key === key);
    if (i < 0) i = lanes.push({ key, gateway: false }) - 1;
    if (gateway) lanes[i]!.gateway = true;
    return i;
  };
  const t0 = messages[0] ? Date.parse(messages[0].captured_at) : 0;
  const arrows = messages.map((m) => ({
    m,
    from: lane(m.src_address, m.src_port, m.direction === 'out'),
    to: lane(m.dst_address, m.dst_port, m.direction === 'in'),
    offsetMs: Date.parse(m.captured_at) - t0,
    label: messageLabel(m),
  }));
  return { lanes, arrows };
}

const LANE = 210;
const LEFT = 80;
const TOP = 48;
const ROW = 34;

function Ladder({ messages, selected, onSelect }: { messages: SipMessage[]; selected: number; onSelect: (i: number) => void }) {
  const { lanes, arrows } = ladderOf(messages);
  const x = (i: number) => LEFT + LANE / 2 + i * LANE;
  const width = LEFT + lanes.length * LANE;
  const height = TOP + arrows.length * ROW + 16;
  return (
    <div class="ladder">
      <svg
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="group"
        aria-label={`Ladder diagram: ${arrows.length} SIP messages between ${lanes.length} endpoints`}
      >
        <defs>
          <marker id="ladder-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor" />
          </marker>
        </defs>
        {lanes.map((l, i) => (
          <g key={l.key}>
            <text x={x(i)} y={16} text-anchor="middle" font-weight="600">
              {l.gateway ? 'gateway' : 'peer'}
            </text>
            <text x={x(i)} y={32} text-anchor="middle" font-size="12">
              {l.key}
            </text>
            <line x1={x(i)} y1={TOP - 8} x2={x(i)} y2={height} stroke="#6e7781" stroke-dasharray="4 3" />
          </g>
        ))}
        {arrows.map((a, i) => {
          const y = TOP + i * ROW + 18;
          const self = a.from === a.to;
          const name = `${i + 1}. ${a.label}, ${lanes[a.from]!.key} to ${lanes[a.to]!.key}, +${(a.offsetMs / 1000).toFixed(3)} s`;
          const activate = () => onSelect(i);
          return (
            <g
              key={i}
              class={`arrow${i === selected ? ' selected' : ''}${a.m.status !== null && a.m.status >= 400 ? ' failure' : ''}`}
              role="button"
              // Lower case: on SVG elements the attribute name is case-sensitive (tabIndex would not focus).
              tabindex={0}
              aria-label={name}
              aria-pressed={i === selected}
              onClick={activate}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  activate();
                }
              }}
            >
              <rect x={0} y={y - 22} width={width} height={ROW - 2} fill="transparent" />
              <text x={4} y={y + 4} font-size="12" class="offset">
                +{(a.offsetMs / 1000).toFixed(3)}s
              </text>
              {self ? (
                <path d={`M ${x(a.from)} ${y - 6} h 30 v 12 h -28`} fill="none" stroke="currentColor" marker-end="url(#ladder-arrow)" />
              ) : (
                <line x1={x(a.from)} y1={y} x2={x(a.to)} y2={y} stroke="currentColor" stroke-width="1.5" marker-end="url(#ladder-arrow)" />
              )}
              <text x={self ? x(a.from) + 36 : (x(a.from) + x(a.to)) / 2} y={y - 5} text-anchor={self ? 'start' : 'middle'} font-size="13">
                {a.label}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}

function CallLadder({ callId }: { callId: string }) {
  const trace = useLoad(
    async () => (await unwrap(api.GET('/console/api/operator/sip_calls/{callId}', { params: { path: { callId } } }))) as unknown as Trace,
    [callId],
  );
  const [selected, setSelected] = useState(0);
  return (
    <section>
      <p>
        <a href="/console/operator/sip">← Captured calls</a>
      </p>
      <h1>SIP ladder</h1>
      <p>
        Call-ID <code data-testid="ladder-call-id">{callId}</code>{' '}
        <button type="button" class="secondary" onClick={trace.reload}>
          Refresh
        </button>
      </p>
      <Loaded state={trace} what="the captured messages">
        {(t) => {
          const shown = t.messages[selected] ?? t.messages[0];
          return (
            <>
              {t.call ? (
                <p>
                  {t.call.party} {t.call.direction} leg of session <code>{t.call.session_id}</code>: {t.call.from_uri ?? '—'} → {t.call.to_uri ?? '—'} (
                  {t.call.status})
                </p>
              ) : null}
              {t.messages.length === 0 ? (
                <Empty>
                  No SIP messages captured for this Call-ID
                  {t.capture_enabled ? ` (messages are kept ${t.retention_hours} h).` : ': SIP capture is off on this gateway.'}
                </Empty>
              ) : (
                <>
                  <Ladder messages={t.messages} selected={selected} onSelect={setSelected} />
                  {shown ? (
                    <div class="card">
                      <h2>
                        Message {t.messages.indexOf(shown) + 1}: {messageLabel(shown)}
                      </h2>
                      <p class="muted">
                        {shown.direction === 'in' ? 'received' : 'sent'} over {shown.transport}, {shown.src_address}:{shown.src_port} → {shown.dst_address}:
                        {shown.dst_port}, {when(shown.captured_at)}
                      </p>
                      <pre class="sip-raw" data-testid="sip-raw">
                        {shown.raw}
                      </pre>
                    </div>
                  ) : null}
                </>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}

function CapturedCalls() {
  const [q, setQ] = useState('');
  const calls = useLoad(
    async () =>
      (await unwrap(api.GET('/console/api/operator/sip_calls', { params: { query: q ? { q } : {} } }))) as unknown as {
        data: CapturedCall[];
        capture_enabled: boolean;
      },
    [q],
  );
  return (
    <section>
      <h1>SIP ladder</h1>
      <form
        class="card inline"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(String(new FormData(e.currentTarget as HTMLFormElement).get('q') ?? '').trim());
        }}
      >
        <label for="sip-q">Call-ID, number or session</label>
        <input id="sip-q" name="q" type="search" />
        <button type="submit">Find captured calls</button>
      </form>
      <Loaded state={calls} what="captured calls">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>{d.capture_enabled ? (q ? 'No captured call matches.' : 'No captured calls.') : 'SIP capture is off on this gateway.'}</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Call-ID</th>
                  <th scope="col">From → To</th>
                  <th scope="col">Session</th>
                  <th scope="col">Messages</th>
                  <th scope="col">Last message</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((c) => (
                  <tr key={c.call_id}>
                    <td>
                      <a href={ladderHref(c.call_id)}>
                        <code>{c.call_id}</code>
                      </a>
                    </td>
                    <td>
                      {c.from_user ?? '—'} → {c.to_user ?? '—'}
                    </td>
                    <td>{c.session_id ? <code>{c.session_id}</code> : '—'}</td>
                    <td>{c.messages}</td>
                    <td>{when(c.last_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}

export function SipLadder() {
  const { query } = useLocation();
  return query.call_id ? <CallLadder key={query.call_id} callId={query.call_id} /> : <CapturedCalls />;
}
