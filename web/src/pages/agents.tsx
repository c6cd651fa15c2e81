// AI agents of the organization (GET /v1/agents with the cookie): create and edit them field by
// field (agent-editor.tsx), and talk to one from the browser (the softphone on an ai_agent session).
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { useMe, canWrite } from '../session';
import { Loaded, Empty, useLoad, when } from '../components/states';
import { AgentEditor } from './agent-editor';
import { draftOf, emptyDraft, type AgentDraft } from './agent-draft';

export function Agents() {
  const { me } = useMe();
  const list = useLoad(() => unwrap(api.GET('/v1/agents', { params: { query: { limit: 100 } } })));
  const [editing, setEditing] = useState<AgentDraft | null>(null);
  const [saved, setSaved] = useState<string>();
  const writer = canWrite(me);

  return (
    <section>
      <h1>AI agents</h1>
      {writer && !editing ? (
        <button
          type="button"
          onClick={() => {
            setSaved(undefined);
            setEditing(emptyDraft());
          }}
        >
          New agent
        </button>
      ) : null}
      {saved ? (
        <p class="state notice" role="status">
          Saved <code>{saved}</code>.
        </p>
      ) : null}
      {editing ? (
        <AgentEditor
          key={editing.id || 'new'}
          initial={editing}
          onCancel={() => setEditing(null)}
          onSaved={(a) => {
            setEditing(null);
            setSaved(a.id);
            list.reload();
          }}
        />
      ) : null}
      <Loaded state={list} what="agents">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No agents yet.</Empty>
          ) : (
            <table data-testid="agents">
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Language</th>
                  <th scope="col">Intents</th>
                  <th scope="col">Tools</th>
                  <th scope="col">Articles</th>
                  <th scope="col">Updated</th>
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
                    <td>{a.intents.length}</td>
                    <td>{a.tools.length}</td>
                    <td>{a.knowledge_base.length}</td>
                    <td>{when(a.updated_at)}</td>
                    <td class="actions">
                      {writer ? (
                        <button
                          type="button"
                          class="secondary"
                          aria-label={`Edit ${a.name}`}
                          onClick={() => {
                            setSaved(undefined);
                            setEditing(draftOf(a));
                          }}
                        >
                          Edit
                        </button>
                      ) : null}
                      {writer ? (
                        <a href={`/console/try?agent=${encodeURIComponent(a.id)}`} aria-label={`Talk to ${a.name}`}>
                          Talk to this agent
                        </a>
                      ) : null}
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
