// Sessions: GET /console/api/sessions (SPEC has no /v1 list) with filters and cursor paging (Previous walks back through the
// cursors already seen), and the live sessions page (status=active, refreshed every 5 s).
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api/client';
import type { paths } from '../api/console';
import { Loaded, Empty, useLoad, when } from '../components/states';

type ListQuery = NonNullable<paths['/console/api/sessions']['get']['parameters']['query']>;
type Filters = Omit<ListQuery, 'limit' | 'starting_after' | 'ending_before'>;
type SessionList = paths['/console/api/sessions']['get']['responses'][200]['content']['application/json'];
type SessionItem = SessionList['data'][number];

const MODES = ['bidirectional_translation', 'assistive_translation', 'ai_agent', 'help_chat_voice'] as const;
const listSessions = (query: ListQuery) => unwrap(api.GET('/console/api/sessions', { params: { query } }));

function seconds(s: SessionItem): string {
  if (!s.started_at) return '—';
  const end = s.ended_at ? Date.parse(s.ended_at) : Date.now();
  return `${Math.max(0, Math.round((end - Date.parse(s.started_at)) / 1000))} s`;
}

function SessionTable({ items, caption }: { items: SessionItem[]; caption: string }) {
  return (
    <table>
      <caption class="sr-only">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Session</th>
          <th scope="col">Status</th>
          <th scope="col">Mode</th>
          <th scope="col">Languages</th>
          <th scope="col">Phone</th>
          <th scope="col">Created</th>
          <th scope="col">Duration</th>
        </tr>
      </thead>
      <tbody>
        {items.map((s) => (
          <tr key={s.id}>
            <td>
              <a href={`/console/sessions/${s.id}`}>{s.id}</a>
            </td>
            <td>{s.status}</td>
            <td>{s.mode}</td>
            <td>
              {s.source_language ?? 'auto'} → {s.target_language ?? 'auto'}
            </td>
            <td>{s.phone_number ?? '—'}</td>
            <td>{when(s.created_at)}</td>
            <td>{seconds(s)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Sessions() {
  const { route } = useLocation();
  const [filters, setFilters] = useState<Filters>({});
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const query: ListQuery = { ...filters, limit: 25, ...(cursor ? { starting_after: cursor } : {}) };
  const list = useLoad(() => listSessions(query), [JSON.stringify(query)]);

  const applyFilters = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const get = (k: string) => String(form.get(k) ?? '').trim();
    const next: Filters = {};
    const status = get('status');
    if (status === 'created' || status === 'active' || status === 'ended') next.status = status;
    const mode = MODES.find((m) => m === get('mode'));
    if (mode) next.mode = mode;
    // Dates are the browser's local days: from the start of "from" to the end of "to".
    if (get('created_after')) next.created_after = new Date(`${get('created_after')}T00:00:00`).toISOString();
    if (get('created_before')) next.created_before = new Date(new Date(`${get('created_before')}T00:00:00`).getTime() + 86_400_000).toISOString();
    if (get('phone_number')) next.phone_number = get('phone_number');
    setCursors([]);
    setFilters(next);
  };
  const open = (e: Event) => {
    e.preventDefault();
    const id = String(new FormData(e.currentTarget as HTMLFormElement).get('session_id') ?? '').trim();
    if (id) route(`/console/sessions/${encodeURIComponent(id)}`);
  };

  return (
    <section>
      <h1>Sessions</h1>
      <form class="card inline" onSubmit={open}>
        <label for="session_id">Open a session by id</label>
        <input id="session_id" name="session_id" placeholder="sess_…" pattern="sess_[0-9a-z]+" />
        <button type="submit">Open</button>
      </form>
      <form class="card filters" onSubmit={applyFilters} aria-label="Filter sessions">
        <label for="f-status">Status</label>
        <select id="f-status" name="status">
          <option value="">any</option>
          <option>created</option>
          <option>active</option>
          <option>ended</option>
        </select>
        <label for="f-mode">Mode</label>
        <select id="f-mode" name="mode">
          <option value="">any</option>
          {MODES.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
        <label for="f-after">Created from</label>
        <input id="f-after" name="created_after" type="date" />
        <label for="f-before">Created to</label>
        <input id="f-before" name="created_before" type="date" />
        <label for="f-phone">Phone number</label>
        <input id="f-phone" name="phone_number" type="tel" placeholder="+1…" />
        <button type="submit">Filter</button>
      </form>
      <Loaded state={list} what="sessions">
        {(d) => (
          <>
            {d.data.length === 0 ? (
              <Empty>No sessions match.</Empty>
            ) : (
              <div data-testid="session-list">
                <SessionTable items={d.data} caption="Sessions" />
              </div>
            )}
            <div class="pager">
              <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
                Previous
              </button>
              <button type="button" disabled={!d.has_more || !d.next_cursor} onClick={() => d.next_cursor && setCursors([...cursors, d.next_cursor])}>
                Next
              </button>
            </div>
          </>
        )}
      </Loaded>
    </section>
  );
}

/** Sessions created or active now, refreshed every 5 s (all pages: an organization's live sessions are bounded by its limit). */
export function LiveSessions() {
  const list = useLoad(async () => {
    const items: SessionItem[] = [];
    for (const status of ['active', 'created'] as const) {
      let after: string | undefined;
      do {
        const page = await listSessions({ status, limit: 100, ...(after ? { starting_after: after } : {}) });
        items.push(...page.data);
        after = page.has_more && page.next_cursor ? page.next_cursor : undefined;
      } while (after);
    }
    return items;
  });
  useEffect(() => {
    const timer = setInterval(list.reload, 5000);
    return () => clearInterval(timer);
  }, [list.reload]);
  return (
    <section>
      <h1>Live sessions</h1>
      <p>Active sessions and sessions waiting for their first party, refreshed every 5 seconds.</p>
      <Loaded state={list} what="live sessions">
        {(items) =>
          items.length === 0 ? (
            <Empty>No live sessions right now.</Empty>
          ) : (
            <div data-testid="live-sessions">
              <SessionTable items={items} caption="Live sessions" />
            </div>
          )
        }
      </Loaded>
    </section>
  );
}
