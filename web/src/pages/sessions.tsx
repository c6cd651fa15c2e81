import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { call } from '../api/client';
import { Loaded, Empty, useLoad, when } from '../components/states';

interface SessionItem { id: string; status: string; mode: string; phone_number?: string; created_at: string; ended_at?: string | null }
interface SessionList { data: SessionItem[]; has_more: boolean; next_cursor: string | null }

export function Sessions() {
  const { route } = useLocation();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const query = new URLSearchParams({ limit: '25', ...filters, ...(cursor ? { starting_after: cursor } : {}) });
  const list = useLoad(() => call<SessionList>('GET', `/v1/sessions?${query}`), [query.toString()]);

  const applyFilters = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const next: Record<string, string> = {};
    for (const k of ['status', 'mode', 'created_after', 'phone_number']) {
      const v = String(form.get(k) ?? '').trim();
      if (v) next[k] = k === 'created_after' ? new Date(v).toISOString() : v;
    }
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
        <select id="f-status" name="status"><option value="">any</option><option>created</option><option>active</option><option>ended</option></select>
        <label for="f-mode">Mode</label>
        <select id="f-mode" name="mode"><option value="">any</option><option>bidirectional_translation</option><option>assistive_translation</option><option>ai_agent</option><option>help_chat_voice</option></select>
        <label for="f-after">Created after</label>
        <input id="f-after" name="created_after" type="date" />
        <label for="f-phone">Phone number</label>
        <input id="f-phone" name="phone_number" type="tel" placeholder="+1…" />
        <button type="submit">Filter</button>
      </form>
      <Loaded state={list} what="sessions">
        {(d) => (
          <>
            {d.data.length === 0 ? <Empty>No sessions match.</Empty> : (
              <table>
                <caption class="sr-only">Sessions</caption>
                <thead><tr><th scope="col">Session</th><th scope="col">Status</th><th scope="col">Mode</th><th scope="col">Phone</th><th scope="col">Created</th></tr></thead>
                <tbody>{d.data.map((s) => (
                  <tr key={s.id}><td><a href={`/console/sessions/${s.id}`}>{s.id}</a></td><td>{s.status}</td><td>{s.mode}</td><td>{s.phone_number ?? '—'}</td><td>{when(s.created_at)}</td></tr>
                ))}</tbody>
              </table>
            )}
            <div class="pager">
              <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>Previous</button>
              <button type="button" disabled={!d.has_more || !d.next_cursor} onClick={() => setCursors([...cursors, d.next_cursor!])}>Next</button>
            </div>
          </>
        )}
      </Loaded>
    </section>
  );
}
