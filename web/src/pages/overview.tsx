// The organization's overview: credits, usage per day (GET /console/api/usage, aggregated by the
// database), live sessions now and the most recent errors.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { useMe } from '../session';
import { Loaded, Empty, useLoad, when } from '../components/states';
import { BarChart } from './bar-chart';

const RANGES = [7, 14, 30, 90] as const;

const ERROR_KINDS: Record<string, string> = {
  session: 'Session',
  analysis: 'Analysis',
  recording: 'Recording',
  webhook_delivery: 'Webhook',
};

export function Overview() {
  const { me } = useMe();
  const org = me.organization!;
  const [days, setDays] = useState<number>(14);
  const usage = useLoad(() => unwrap(api.GET('/console/api/usage', { params: { query: { days } } })), [days]);
  const live = useLoad(() => unwrap(api.GET('/console/api/sessions', { params: { query: { status: 'active', limit: 20 } } })));
  const u = usage.data;
  return (
    <section>
      <h1>{org.name}</h1>
      <div class="tiles">
        <div class="tile">
          <span class="label">Credits remaining</span>
          <span class="value" data-testid="credits">
            {u?.credits ?? org.credits}
          </span>
        </div>
        <div class="tile">
          <span class="label">Credits used</span>
          <span class="value">{u?.credits_used ?? org.credits_used}</span>
        </div>
        <div class="tile">
          <span class="label">Live sessions now</span>
          <span class="value" data-testid="live-count">
            {u ? u.live_sessions : '…'}
          </span>
        </div>
        <div class="tile">
          <span class="label">Status</span>
          <span class="value">{org.status}</span>
        </div>
        <div class="tile">
          <span class="label">Features</span>
          <span class="value small">{org.features.join(', ') || 'none'}</span>
        </div>
      </div>

      <div class="usage-head">
        <h2 id="usage-heading">Usage per day (UTC)</h2>
        <label for="usage-days">Period</label>
        <select id="usage-days" value={String(days)} onChange={(e) => setDays(Number((e.currentTarget as HTMLSelectElement).value))}>
          {RANGES.map((n) => (
            <option key={n} value={String(n)}>
              last {n} days
            </option>
          ))}
        </select>
      </div>
      <Loaded state={usage} what="usage">
        {(d) => (
          <div class="charts" aria-labelledby="usage-heading" aria-busy={usage.loading}>
            <BarChart
              id="sessions"
              title="Sessions"
              unit="sessions"
              badLabel="ended in error"
              bars={d.series.map((s) => ({ label: s.date, value: s.sessions, bad: s.failed_sessions }))}
            />
            <BarChart id="minutes" title="Session minutes" unit="minutes" bars={d.series.map((s) => ({ label: s.date, value: s.minutes }))} />
            <BarChart
              id="analyses"
              title="Analyses"
              unit="analyses"
              badLabel="failed"
              bars={d.series.map((s) => ({ label: s.date, value: s.analyses, bad: s.failed_analyses }))}
            />
            <BarChart id="credits" title="Credits used" unit="credits" bars={d.series.map((s) => ({ label: s.date, value: s.credits_used }))} />
          </div>
        )}
      </Loaded>

      <h2>Live sessions</h2>
      <Loaded state={live} what="live sessions">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No live sessions right now.</Empty>
          ) : (
            <ul>
              {d.data.map((s) => (
                <li key={s.id}>
                  <a href={`/console/sessions/${s.id}`}>{s.id}</a> · {s.mode} · since {when(s.created_at)}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>

      <h2>Recent errors</h2>
      <Loaded state={usage} what="recent errors">
        {(d) =>
          d.errors.length === 0 ? (
            <Empty>No errors in the last {d.days} days.</Empty>
          ) : (
            <table data-testid="recent-errors">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">Error</th>
                  <th scope="col">Session</th>
                </tr>
              </thead>
              <tbody>
                {d.errors.map((e) => (
                  <tr key={`${e.kind}-${e.id}`}>
                    <td>{when(e.at)}</td>
                    <td>{ERROR_KINDS[e.kind] ?? e.kind}</td>
                    <td>{e.message}</td>
                    <td>{e.session_id ? <a href={`/console/sessions/${e.session_id}`}>{e.session_id}</a> : '—'}</td>
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
