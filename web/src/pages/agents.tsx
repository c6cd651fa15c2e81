import { useState } from 'preact/hooks';
import { api, unwrap, CallError } from '../api/client';
import { useMe, canWrite } from '../session';
import { Loaded, Empty, ErrorBox, useLoad, when } from '../components/states';

interface Agent {
  id: string;
  name: string;
  description?: string | null;
  language?: string | null;
  greeting?: string | null;
  created_at?: string;
}

/** Create and edit agents; validation messages come from the API (its `param` names the field). */
export function Agents() {
  const { me } = useMe();
  const list = useLoad(async () => (await unwrap(api.GET('/v1/agents', { params: { query: { limit: 100 } as never } }))) as unknown as { data: Agent[] });
  const [editing, setEditing] = useState<Agent | null>(null);
  const [error, setError] = useState<unknown>();

  const save = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(String(form.get('definition') || '{}'));
    } catch {
      return setError(new Error('The definition is not valid JSON.'));
    }
    body.name = String(form.get('name'));
    try {
      if (editing?.id) await unwrap(api.PATCH('/v1/agents/{id}', { params: { path: { id: editing.id } }, body: body as never }));
      else await unwrap(api.POST('/v1/agents', { body: body as never }));
      setError(undefined);
      setEditing(null);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  const param = error instanceof CallError ? error.param : undefined;
  return (
    <section>
      <h1>AI agents</h1>
      {canWrite(me) ? (
        <button type="button" onClick={() => setEditing({ id: '', name: '' })}>
          New agent
        </button>
      ) : null}
      {editing ? (
        <form class="card" onSubmit={save} aria-labelledby="agent-form">
          <h2 id="agent-form">{editing.id ? `Edit ${editing.name}` : 'New agent'}</h2>
          <label for="agent-name">Name</label>
          <input id="agent-name" name="name" defaultValue={editing.name} required aria-invalid={param === 'name'} />
          <label for="agent-def">Definition (JSON: language, greeting, instructions, intents, tools, escalation, knowledge_base)</label>
          <textarea
            id="agent-def"
            name="definition"
            rows={10}
            defaultValue={JSON.stringify(
              editing.id
                ? { greeting: editing.greeting ?? undefined, language: editing.language ?? undefined }
                : { language: 'en', greeting: 'Hello, how can I help?' },
              null,
              2,
            )}
            aria-invalid={Boolean(param && param !== 'name')}
          />
          {error ? <ErrorBox error={error} /> : null}
          {param ? (
            <p class="state error">
              Field: <code>{param}</code>
            </p>
          ) : null}
          <button type="submit">Save</button>{' '}
          <button type="button" class="secondary" onClick={() => setEditing(null)}>
            Cancel
          </button>
        </form>
      ) : null}
      <Loaded state={list} what="agents">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No agents yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Language</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((a) => (
                  <tr key={a.id}>
                    <td>
                      {a.name} <code>{a.id}</code>
                    </td>
                    <td>{a.language ?? '—'}</td>
                    <td>{when(a.created_at)}</td>
                    <td>
                      {canWrite(me) ? (
                        <button type="button" class="secondary" onClick={() => setEditing(a)}>
                          Edit
                        </button>
                      ) : null}{' '}
                      <a href={`/console/try?agent=${a.id}`}>Talk to this agent</a>
                    </td>
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
