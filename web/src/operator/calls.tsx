import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Loaded, Empty, useLoad, when } from '../components/states';

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
  quality?: { loss_percent?: number; jitter_ms?: number; rtt_ms?: number | null; mos?: number } | null;
  session_mode: string;
}

export function LiveCalls() {
  const [q, setQ] = useState('');
  const calls = useLoad(
    async () => (await unwrap(api.GET('/console/api/operator/calls', { params: { query: q ? { q } : {} } }))) as unknown as { data: Call[] },
    [q],
  );
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
                  <th scope="col">Call-ID</th>
                  <th scope="col">Session</th>
                  <th scope="col">Party</th>
                  <th scope="col">From → To</th>
                  <th scope="col">Status</th>
                  <th scope="col">Quality</th>
                  <th scope="col">Started</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <code>{c.call_sid}</code>
                    </td>
                    <td>
                      <code>{c.session_id}</code> ({c.session_mode})
                    </td>
                    <td>
                      {c.party} {c.direction}
                    </td>
                    <td>
                      {c.from_uri ?? '—'} → {c.to_uri ?? '—'}
                    </td>
                    <td>{c.status}</td>
                    <td>
                      {c.quality
                        ? `loss ${c.quality.loss_percent ?? '—'}%, jitter ${c.quality.jitter_ms ?? '—'} ms, RTT ${c.quality.rtt_ms ?? '—'} ms, MOS ${c.quality.mos ?? '—'}`
                        : 'not measured'}
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
