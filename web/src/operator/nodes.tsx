import { useEffect } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Empty, Loaded, useLoad, when } from '../components/states';
import './operator.css';

interface NodeBase {
  id: string;
  state: 'live' | 'stale' | 'lost';
  last_beat_at: string;
  beat_age_ms: number;
  answering: boolean;
}
interface LiveNode extends NodeBase {
  state: 'live' | 'stale';
  roles: string[];
  url: string;
  sip: { address: string; port: number } | null;
  started_at: string;
  period_ms: number;
  uptime_seconds: number;
  live_sessions: number | null;
  live_calls: number | null;
  cpu_percent: number;
  cores: number;
  load_average: number[];
  event_loop_delay_ms: { p50: number; p99: number; max: number };
  rss_bytes: number;
  stt_pool: { busy: number; size: number; waiting: number } | null;
  /** The media clock's admission (MEDIA_OVERLOAD_LATE_PERCENT); null without SIP. */
  media_overload: { enabled: boolean; overloaded: boolean; late_percent: number; loop_busy_percent: number; overloads: number } | null;
}
type Node = LiveNode | (NodeBase & { state: 'lost' });

const hms = (s: number) => `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m ${s % 60}s`;
const ago = (ms: number) => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s ago` : `${Math.round(ms / 1000)} s ago`);
const STATE_TEXT = { live: 'live', stale: 'stale (missed a beat)', lost: 'lost (no heartbeat)' } as const;

function NodeRow({ n }: { n: Node }) {
  const badge = <span class={`badge ${n.state === 'live' ? 'ok' : n.state === 'stale' ? 'warn' : 'bad'}`}>{STATE_TEXT[n.state]}</span>;
  const name = (
    <th scope="row">
      {n.id}
      {n.answering ? <span class="muted"> (this node)</span> : null}
    </th>
  );
  if (n.state === 'lost')
    return (
      <tr data-node-id={n.id} data-state={n.state}>
        {name}
        <td>{badge}</td>
        <td colSpan={8}>
          Last heartbeat {ago(n.beat_age_ms)} ({when(n.last_beat_at)}); its record has expired.
        </td>
      </tr>
    );
  return (
    <tr data-node-id={n.id} data-state={n.state}>
      {name}
      <td>
        {badge}
        <div class="muted">beat {ago(n.beat_age_ms)}</div>
      </td>
      <td>
        {n.roles.join(', ')}
        <div class="muted">
          {n.url}
          {n.sip ? ` · SIP ${n.sip.address}:${n.sip.port}` : ''}
        </div>
      </td>
      <td>{hms(n.uptime_seconds)}</td>
      <td>
        {n.live_sessions ?? '—'} / {n.live_calls ?? '—'}
        {n.media_overload?.overloaded ? (
          <div>
            <span class="badge bad" data-testid="media-overloaded">
              turning new calls and streams away
            </span>
          </div>
        ) : null}
        {n.media_overload?.enabled ? (
          <div class="muted">
            media clock late {n.media_overload.late_percent} %, event loop busy {n.media_overload.loop_busy_percent} %
          </div>
        ) : null}
      </td>
      <td>
        {n.cpu_percent.toFixed(1)} %
        <div class="muted">
          load {n.load_average.map((l) => l.toFixed(2)).join(' ')} on {n.cores} cores
        </div>
      </td>
      <td>
        {n.event_loop_delay_ms.p50.toFixed(1)} / {n.event_loop_delay_ms.p99.toFixed(1)} / {n.event_loop_delay_ms.max.toFixed(1)} ms
      </td>
      <td>{Math.round(n.rss_bytes / 1048576)} MiB</td>
      <td>{n.stt_pool ? `${n.stt_pool.busy} / ${n.stt_pool.size} busy${n.stt_pool.waiting ? `, ${n.stt_pool.waiting} waiting` : ''}` : '—'}</td>
    </tr>
  );
}

export function Nodes() {
  const nodes = useLoad(async () => (await unwrap(api.GET('/console/api/operator/nodes'))) as unknown as { data: Node[]; live_sessions_gateway: number });
  useEffect(() => {
    const timer = setInterval(nodes.reload, 2000);
    return () => clearInterval(timer);
  }, []);
  return (
    <section>
      <h1>Nodes</h1>
      <Loaded state={nodes} what="nodes">
        {(d) => (
          <>
            <p>
              Live sessions on the gateway: <strong data-testid="gateway-live">{d.live_sessions_gateway}</strong> · nodes live:{' '}
              <strong data-testid="nodes-live">{d.data.filter((n) => n.state === 'live').length}</strong> of {d.data.length}
            </p>
            {d.data.length === 0 ? (
              <Empty>No node has published a heartbeat.</Empty>
            ) : (
              <table>
                <caption class="sr-only">Gateway nodes from their heartbeat records, refreshed every 2 seconds</caption>
                <thead>
                  <tr>
                    <th scope="col">Node</th>
                    <th scope="col">State</th>
                    <th scope="col">Roles and addresses</th>
                    <th scope="col">Uptime</th>
                    <th scope="col">Sessions / calls</th>
                    <th scope="col">CPU</th>
                    <th scope="col">Event-loop delay p50 / p99 / max</th>
                    <th scope="col">Memory</th>
                    <th scope="col">STT pool</th>
                  </tr>
                </thead>
                <tbody>
                  {d.data.map((n) => (
                    <NodeRow key={n.id} n={n} />
                  ))}
                </tbody>
              </table>
            )}
            <p class="muted">
              Each node publishes its record every few seconds; one that misses a beat turns stale, one whose record expired (stopped without shutting down) is
              lost. A node shut down cleanly removes its record.
            </p>
          </>
        )}
      </Loaded>
    </section>
  );
}
