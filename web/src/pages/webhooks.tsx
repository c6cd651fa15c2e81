// Webhook endpoints (/v1/webhook_endpoints): create, edit, disable, rotate, test, and the delivery
// log. On a gateway without those routes the page says so.
import { useState } from 'preact/hooks';
import { api, call, unwrap } from '../api/client';
import { useMe, canWrite } from '../session';
import { Loaded, Empty, ErrorBox, useLoad, when } from '../components/states';

type Endpoint = {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  realtime: boolean;
  description: string | null;
  disabled_reason: string | null;
  created_at: string;
  secret?: string;
};
type Delivery = {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
  next_retry_at: string | null;
};

type AttemptDetail = Delivery & {
  delivery_status: string;
  request_body: string;
  response_headers: Record<string, string> | null;
  response_body: string | null;
};

function pretty(text: string | null): string {
  if (!text) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** One attempt in full: the signed request body and the receiver's answer (headers, first 4 KB of the body). */
function AttemptView({ id }: { id: string }) {
  const detail = useLoad(() => call<AttemptDetail>('GET', `/console/api/webhook_attempts/${encodeURIComponent(id)}`), [id]);
  return (
    <Loaded state={detail} what="the attempt">
      {(a) => (
        <div class="attempt" data-testid="attempt-detail">
          <h4>
            Attempt {a.attempt} of <code>{a.event_id}</code>: {a.outcome}
            {a.status_code ? ` (HTTP ${a.status_code})` : ''}
          </h4>
          {a.error ? <p class="state error">{a.error}</p> : null}
          <h5>Request body</h5>
          <pre data-testid="attempt-request">{pretty(a.request_body)}</pre>
          <h5>Response headers</h5>
          {a.response_headers ? (
            <pre>
              {Object.entries(a.response_headers)
                .map(([k, v]) => `${k}: ${v}`)
                .join('\n')}
            </pre>
          ) : (
            <Empty>No response.</Empty>
          )}
          <h5>Response body (first 4 KB)</h5>
          {a.response_body ? <pre data-testid="attempt-response">{pretty(a.response_body)}</pre> : <Empty>Empty or not recorded.</Empty>}
        </div>
      )}
    </Loaded>
  );
}

function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const { me } = useMe();
  const log = useLoad(
    async () =>
      (await unwrap(api.GET('/v1/webhook_endpoints/{id}/deliveries', { params: { path: { id: endpoint.id }, query: { limit: 100 } } }))) as {
        data: Delivery[];
      },
    [endpoint.id],
  );
  const [shown, setShown] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<unknown>();
  const replay = async (eventId: string) => {
    try {
      setError(undefined);
      const r = await call<{ replayed: boolean }>(
        'POST',
        `/console/api/webhook_endpoints/${encodeURIComponent(endpoint.id)}/deliveries/${encodeURIComponent(eventId)}/replay`,
      );
      setNotice(r.replayed ? `Event ${eventId} queued again.` : `Event ${eventId} is already queued.`);
      log.reload();
    } catch (err) {
      setError(err);
    }
  };
  // The newest attempt of each event decides whether it can be replayed (the log is newest first).
  const latest = new Set<string>();
  const isLatest = (x: Delivery) => (latest.has(x.event_id) ? false : (latest.add(x.event_id), true));
  return (
    <div class="card">
      <h3>
        Delivery log of {endpoint.url}{' '}
        <button type="button" class="secondary" onClick={log.reload}>
          Refresh
        </button>
      </h3>
      {notice ? (
        <p class="state notice" role="status">
          {notice}
        </p>
      ) : null}
      {error ? <ErrorBox error={error} /> : null}
      <Loaded state={log} what="deliveries">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No deliveries yet.</Empty>
          ) : (
            <table data-testid="deliveries">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Type</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Time</th>
                  <th scope="col">Next retry</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((x, i) => (
                  <tr key={x.id ?? i}>
                    <td>
                      <code>{x.event_id}</code>
                    </td>
                    <td>{x.event_type}</td>
                    <td>{x.attempt}</td>
                    <td>{x.outcome}</td>
                    <td>{x.status_code ?? x.error ?? '—'}</td>
                    <td>{x.duration_ms} ms</td>
                    <td>{when(x.attempted_at)}</td>
                    <td>{when(x.next_retry_at)}</td>
                    <td class="actions">
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Details of attempt ${x.attempt} of ${x.event_id}`}
                        onClick={() => setShown(shown === x.id ? undefined : x.id)}
                      >
                        Details
                      </button>
                      {isLatest(x) && x.outcome === 'failed' && canWrite(me) ? (
                        <button type="button" aria-label={`Replay ${x.event_id}`} onClick={() => replay(x.event_id)}>
                          Replay
                        </button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      {shown ? <AttemptView key={shown} id={shown} /> : null}
    </div>
  );
}

export function Webhooks() {
  const { me } = useMe();
  const list = useLoad(async () => (await unwrap(api.GET('/v1/webhook_endpoints', { params: { query: { limit: 100 } } }))) as { data: Endpoint[] });
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [open, setOpen] = useState<Endpoint>();
  const [notice, setNotice] = useState<string>();

  const act = async (fn: () => Promise<unknown>) => {
    try {
      setError(undefined);
      await fn();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const events = String(form.get('events') ?? '*')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return act(async () => {
      const description = String(form.get('description') ?? '');
      const ep = (await unwrap(
        api.POST('/v1/webhook_endpoints', {
          body: { url: String(form.get('url')), events, realtime: form.get('realtime') === 'on', ...(description ? { description } : {}) },
        }),
      )) as Endpoint;
      setSecret(ep.secret);
    });
  };

  return (
    <section>
      <h1>Webhook endpoints</h1>
      {canWrite(me) ? (
        <form class="card" onSubmit={create} aria-labelledby="new-wh">
          <h2 id="new-wh">Add an endpoint</h2>
          <label for="wh-url">HTTPS URL</label>
          <input id="wh-url" name="url" type="url" required placeholder="https://example.com/hooks/voxbridge" />
          <label for="wh-events">Events (comma separated, or *)</label>
          <input id="wh-events" name="events" defaultValue="*" />
          <label class="check">
            <input type="checkbox" name="realtime" /> Realtime (also transcript.segment)
          </label>
          <label for="wh-desc">Description</label>
          <input id="wh-desc" name="description" />
          <button type="submit">Add endpoint</button>
        </form>
      ) : null}
      {error ? <ErrorBox error={error} /> : null}
      {notice ? (
        <p class="state notice" role="status">
          {notice}
        </p>
      ) : null}
      {secret ? (
        <div class="card shown-once" role="status">
          <p>
            <strong>Signing secret — shown once:</strong>
          </p>
          <code data-testid="wh-secret">{secret}</code>
        </div>
      ) : null}
      <Loaded state={list} what="webhook endpoints">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No webhook endpoints yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((ep) => (
                  <tr key={ep.id} data-endpoint-id={ep.id}>
                    <td>{ep.url}</td>
                    <td>
                      {ep.events.join(', ')}
                      {ep.realtime ? ' + realtime' : ''}
                    </td>
                    <td>
                      {ep.enabled ? (
                        <span class="badge ok">enabled</span>
                      ) : (
                        <span class="badge bad">disabled{ep.disabled_reason ? `: ${ep.disabled_reason}` : ''}</span>
                      )}
                    </td>
                    <td>{when(ep.created_at)}</td>
                    <td class="actions">
                      <button type="button" class="secondary" onClick={() => setOpen(ep)}>
                        Deliveries
                      </button>
                      {canWrite(me) ? (
                        <>
                          <button
                            type="button"
                            class="secondary"
                            onClick={() =>
                              act(async () => {
                                await unwrap(api.POST('/v1/webhook_endpoints/{id}/test', { params: { path: { id: ep.id } } }));
                                setNotice(`Test event sent to ${ep.url}.`);
                                setOpen(ep);
                              })
                            }
                          >
                            Send test
                          </button>
                          <button
                            type="button"
                            class="secondary"
                            onClick={() =>
                              act(async () =>
                                setSecret(
                                  ((await unwrap(api.POST('/v1/webhook_endpoints/{id}/rotate_secret', { params: { path: { id: ep.id } } }))) as Endpoint)
                                    .secret,
                                ),
                              )
                            }
                          >
                            Rotate secret
                          </button>
                          <button
                            type="button"
                            class="secondary"
                            onClick={() =>
                              act(() => unwrap(api.PATCH('/v1/webhook_endpoints/{id}', { params: { path: { id: ep.id } }, body: { enabled: !ep.enabled } })))
                            }
                          >
                            {ep.enabled ? 'Disable' : 'Enable'}
                          </button>
                          <button
                            type="button"
                            class="secondary"
                            onClick={() => {
                              const url = prompt('New URL', ep.url);
                              if (url) void act(() => unwrap(api.PATCH('/v1/webhook_endpoints/{id}', { params: { path: { id: ep.id } }, body: { url } })));
                            }}
                          >
                            Edit URL
                          </button>
                        </>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      {open ? <Deliveries key={open.id} endpoint={open} /> : null}
    </section>
  );
}
