import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Loaded, Empty, useLoad, when } from '../components/states';
import { ladderHref } from './sip-ladder';
import './operator.css';

/** A leg's RTP/RTCP quality as the telephony plane reports it. */
export interface Quality {
  packets_sent?: number;
  packets_received?: number;
  packets_lost?: number;
  loss_percent?: number;
  jitter_ms?: number;
  rtt_ms?: number | null;
  mos?: number;
  remote?: { loss_percent: number; jitter_ms: number } | null;
}

interface Call {
  id: string;
  session_id: string;
  party: string;
  direction: string;
  call_sid: string;
  from_uri: string | null;
  to_uri: string | null;
  status: string;
  created_at: string;
  ended_at: string | null;
  quality?: Quality | null;
  quality_live: boolean;
  node: string | null;
  session_mode: string;
}

const num = (v: number | null | undefined, unit = '') => (v === null || v === undefined ? '—' : `${v}${unit}`);

export function QualityCell({ q, live }: { q: Quality | null | undefined; live: boolean }) {
  if (!q) return <span class="muted">not measured</span>;
  return (
    <div class="quality">
      <div>
        <strong>MOS {num(q.mos)}</strong> <span class="muted">{live ? '(live)' : '(final)'}</span>
      </div>
      <div>
        loss {num(q.loss_percent, ' %')}
        {q.remote ? ` (peer sees ${q.remote.loss_percent} %)` : ''} · jitter {num(q.jitter_ms, ' ms')} · RTT{' '}
        {q.rtt_ms === null ? 'no RTCP yet' : num(q.rtt_ms, ' ms')}
      </div>
      <div class="muted">
        {num(q.packets_sent)} sent · {num(q.packets_received)} received · {num(q.packets_lost)} lost
      </div>
    </div>
  );
}

export function LiveCalls() {
  const [q, setQ] = useState('');
  const calls = useLoad(
    async () => (await unwrap(api.GET('/console/api/operator/calls', { params: { query: q ? { q } : {} } }))) as unknown as { data: Call[] },
    [q],
  );
  // Live figures change while the legs are up: refresh the live list (not a search's results).
  useEffect(() => {
    if (q) return;
    const timer = setInterval(calls.reload, 3000);
    return () => clearInterval(timer);
  }, [q, calls.reload]);
  return (
    <section>
      <h1>{q ? `Calls matching “${q}”` : 'Live calls'}</h1>
      <form
        class="card inline"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(String(new FormData(e.currentTarget as HTMLFormElement).get('q') ?? '').trim());
        }}
      >
        <label for="call-q">Number, Call-ID or session</label>
        <input id="call-q" name="q" type="search" />
        <button type="submit">Search</button>
      </form>
      <Loaded state={calls} what="calls">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>{q ? 'No call matches.' : 'No live calls.'}</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Call-ID and parties</th>
                  <th scope="col">Session and leg</th>
                  <th scope="col">Status and node</th>
                  <th scope="col">Media quality</th>
                  <th scope="col">Started</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((c) => (
                  <tr key={c.id} data-call-sid={c.call_sid}>
                    <td class="call-id">
                      <a href={ladderHref(c.call_sid)} title="SIP ladder of this call">
                        <code>{c.call_sid}</code>
                      </a>
                      <div class="muted">
                        {c.from_uri ?? '—'} → {c.to_uri ?? '—'}
                      </div>
                    </td>
                    <td>
                      <code>{c.session_id}</code>
                      <div class="muted">
                        {c.session_mode} · {c.party} {c.direction}
                      </div>
                    </td>
                    <td>
                      {c.status}
                      <div class="muted">{c.node ? `on ${c.node}` : c.ended_at ? 'ended' : 'no live record'}</div>
                    </td>
                    <td>
                      <QualityCell q={c.quality} live={c.quality_live} />
                    </td>
                    <td>{when(c.created_at)}</td>
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
