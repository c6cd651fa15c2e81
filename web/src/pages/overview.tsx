import { api, unwrap } from '../api/client';
import { useMe } from '../session';
import { Loaded, Empty, useLoad, when } from '../components/states';

export function Overview() {
  const { me } = useMe();
  const org = me.organization!;
  const live = useLoad(() => unwrap(api.GET('/console/api/sessions', { params: { query: { status: 'active', limit: 20 } } })));
  const recent = useLoad(() => unwrap(api.GET('/console/api/sessions', { params: { query: { status: 'ended', limit: 50 } } })));
  return (
    <section>
      <h1>{org.name}</h1>
      <div class="tiles">
        <div class="tile">
          <span class="label">Credits remaining</span>
          <span class="value" data-testid="credits">
            {org.credits}
          </span>
        </div>
        <div class="tile">
          <span class="label">Credits used</span>
          <span class="value">{org.credits_used}</span>
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
      <Loaded state={recent} what="recent sessions">
        {(d) => {
          const failed = d.data.filter((s) => s.end_reason && !['explicit_end', 'api_end', 'normal'].includes(s.end_reason));
          return failed.length === 0 ? (
            <Empty>No sessions ended in error recently.</Empty>
          ) : (
            <ul>
              {failed.map((s) => (
                <li key={s.id}>
                  <a href={`/console/sessions/${s.id}`}>{s.id}</a> ended: {s.end_reason}
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
    </section>
  );
}
