import { useEffect } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Loaded, useLoad } from '../components/states';

interface Node {
  id: string;
  roles: string[];
  health: string;
  uptime_seconds: number;
  live_sessions_here: number | null;
  event_loop_delay_ms: { p50: number; p99: number; max: number };
  load_average: number[];
  rss_bytes: number;
}

const hms = (s: number) => `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m ${s % 60}s`;

export function Nodes() {
  const nodes = useLoad(async () => (await unwrap(api.GET('/console/api/operator/nodes'))) as unknown as { data: Node[]; live_sessions_gateway: number });
  useEffect(() => {
    const timer = setInterval(nodes.reload, 5000);
    return () => clearInterval(timer);
  }, []);
  return (
    <section>
      <h1>Nodes</h1>
      <Loaded state={nodes} what="nodes">
        {(d) => (
          <>
            <p>
              Live sessions on the gateway: <strong data-testid="gateway-live">{d.live_sessions_gateway}</strong>
            </p>
            <table>
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">Roles</th>
                  <th scope="col">Health</th>
                  <th scope="col">Uptime</th>
                  <th scope="col">Live sessions</th>
                  <th scope="col">Event-loop delay p50 / p99 / max</th>
                  <th scope="col">Load</th>
                  <th scope="col">Memory</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((n) => (
                  <tr key={n.id}>
                    <td>{n.id}</td>
                    <td>{n.roles.join(', ')}</td>
                    <td>
                      <span class="badge ok">{n.health}</span>
                    </td>
                    <td>{hms(n.uptime_seconds)}</td>
                    <td>{n.live_sessions_here ?? 'no media role'}</td>
                    <td>
                      {n.event_loop_delay_ms.p50.toFixed(1)} / {n.event_loop_delay_ms.p99.toFixed(1)} / {n.event_loop_delay_ms.max.toFixed(1)} ms
                    </td>
                    <td>{n.load_average.map((l) => l.toFixed(2)).join(' ')}</td>
                    <td>{Math.round(n.rss_bytes / 1048576)} MiB</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p class="state notice">Only the node answering reports itself: nodes publish no heartbeat for the others yet.</p>
          </>
        )}
      </Loaded>
    </section>
  );
}
