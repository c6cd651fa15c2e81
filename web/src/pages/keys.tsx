import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { useMe, canWrite } from '../session';
import { Loaded, Empty, ErrorBox, useLoad, when } from '../components/states';

const SCOPES = [
  'sessions:read',
  'sessions:write',
  'recordings:read',
  'analysis:read',
  'analysis:write',
  'webhooks:manage',
  'agents:read',
  'agents:write',
] as const;
type Scope = (typeof SCOPES)[number];

interface KeyRow {
  id: string;
  environment: string;
  key_hint: string;
  scopes: string[];
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

export function Keys() {
  const { me } = useMe();
  const keys = useLoad(async () => (await unwrap(api.GET('/console/api/keys'))) as unknown as { data: KeyRow[] });
  const [created, setCreated] = useState<{ id: string; key: string }>();
  const [error, setError] = useState<unknown>();

  const create = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const scopes = SCOPES.filter((s) => form.get(`scope-${s}`));
    const expires = String(form.get('expires') ?? '');
    try {
      const key = (await unwrap(
        api.POST('/console/api/keys', {
          body: {
            environment: form.get('environment') as 'live' | 'test',
            scopes: scopes as Scope[],
            expires_at: expires ? new Date(expires).toISOString() : null,
          },
        }),
      )) as unknown as { id: string; key: string };
      setCreated(key);
      setError(undefined);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };

  const revoke = async (id: string) => {
    if (!confirm(`Revoke ${id}? Clients using it stop working at once.`)) return;
    try {
      await unwrap(api.POST('/console/api/keys/{id}/revoke', { params: { path: { id } } }));
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>API keys</h1>
      {canWrite(me) ? (
        <form class="card" onSubmit={create} aria-labelledby="new-key">
          <h2 id="new-key">Create a key</h2>
          <label for="environment">Environment</label>
          <select id="environment" name="environment">
            <option value="test">test</option>
            <option value="live">live</option>
          </select>
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label class="check" key={s}>
                <input type="checkbox" name={`scope-${s}`} defaultChecked /> {s}
              </label>
            ))}
          </fieldset>
          <label for="expires">Expires (optional)</label>
          <input id="expires" name="expires" type="datetime-local" />
          <button type="submit">Create key</button>
        </form>
      ) : null}
      {error ? <ErrorBox error={error} /> : null}
      {created ? (
        <div class="card shown-once" role="status">
          <p>
            <strong>Copy this key now — it is shown only once.</strong>
          </p>
          <code data-testid="new-key">{created.key}</code>
        </div>
      ) : null}
      <Loaded state={keys} what="API keys">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No API keys yet.</Empty>
          ) : (
            <table>
              <caption class="sr-only">API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Env</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td>
                      <code>{k.key_hint}</code>
                    </td>
                    <td>{k.environment}</td>
                    <td class="scopes">{k.scopes.join(', ')}</td>
                    <td>{when(k.created_at)}</td>
                    <td>{k.last_used_at ? when(k.last_used_at) : 'never'}</td>
                    <td>{k.expires_at ? when(k.expires_at) : 'never'}</td>
                    <td>{k.revoked_at ? <span class="badge bad">revoked</span> : <span class="badge ok">active</span>}</td>
                    <td>
                      {!k.revoked_at && canWrite(me) ? (
                        <button type="button" class="danger" onClick={() => revoke(k.id)} aria-label={`Revoke ${k.key_hint}`}>
                          Revoke
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
    </section>
  );
}
