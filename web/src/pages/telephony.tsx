// Numbers and connections (owners): what the admin CLI provisioned for the organization; owners add
// numbers to an existing active connection (POST /console/api/numbers, CSRF-checked, validated there).
import { useState } from 'preact/hooks';
import { api, call, unwrap, CallError } from '../api/client';
import { Loaded, Empty, ErrorBox, useLoad, when } from '../components/states';

interface Connection {
  id: string;
  provider: string;
  host: string;
  port: number;
  transport: string;
  status: string;
  credentials_valid: boolean;
  has_credentials: boolean;
  is_default: boolean;
  numbers: number;
  created_at: string;
}
interface PhoneNumber {
  id: string;
  number: string;
  connection_id: string | null;
  provider: string | null;
  connection_status: string | null;
  created_at: string;
}

export function Telephony() {
  const connections = useLoad(() => call<{ data: Connection[] }>('GET', '/console/api/connections'));
  const numbers = useLoad(() => call<{ data: PhoneNumber[] }>('GET', '/console/api/numbers'));
  const [error, setError] = useState<unknown>();
  const [added, setAdded] = useState<string>();
  const [busy, setBusy] = useState(false);
  const param = error instanceof CallError ? error.param : undefined;

  const add = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    setBusy(true);
    setAdded(undefined);
    try {
      const n = await unwrap(
        api.POST('/console/api/numbers', { body: { number: String(f.get('number') ?? '').trim(), connection_id: String(f.get('connection_id') ?? '') } }),
      );
      setError(undefined);
      setAdded(`${n.number} added to ${n.connection_id}.`);
      form.reset();
      numbers.reload();
      connections.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const active = (connections.data?.data ?? []).filter((c) => c.status === 'active');
  return (
    <section>
      <h1>Numbers and connections</h1>
      <p>
        Connections are provisioned with <code>voxbridge admin connection</code>; owners add numbers to them here.
      </p>
      {connections.data ? (
        <form class="card" onSubmit={add} aria-labelledby="add-number" noValidate>
          <h2 id="add-number">Add a number</h2>
          {active.length === 0 ? (
            <p class="state empty">No active connection to add a number to.</p>
          ) : (
            <>
              <label for="num-number">Number (E.164)</label>
              <input
                id="num-number"
                name="number"
                placeholder="+14155550100"
                inputMode="tel"
                autoComplete="off"
                aria-invalid={param === 'number'}
                aria-describedby={param === 'number' ? 'num-error' : undefined}
              />
              <label for="num-connection">Connection</label>
              <select
                id="num-connection"
                name="connection_id"
                aria-invalid={param === 'connection_id'}
                aria-describedby={param === 'connection_id' ? 'num-error' : undefined}
              >
                {active.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.id} ({c.provider}, {c.host})
                  </option>
                ))}
              </select>
              <div>
                <button type="submit" disabled={busy}>
                  Add number
                </button>
              </div>
            </>
          )}
          {error ? (
            <div id="num-error">
              <ErrorBox error={error} />
            </div>
          ) : null}
          {added ? (
            <p class="state notice" role="status">
              {added}
            </p>
          ) : null}
        </form>
      ) : null}
      <h2>Connections</h2>
      <Loaded state={connections} what="connections">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No provider connections.</Empty>
          ) : (
            <table data-testid="connections">
              <thead>
                <tr>
                  <th scope="col">Connection</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Address</th>
                  <th scope="col">Status</th>
                  <th scope="col">Credentials</th>
                  <th scope="col">Numbers</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <code>{c.id}</code>
                      {c.is_default ? ' (default)' : ''}
                    </td>
                    <td>{c.provider}</td>
                    <td>
                      {c.host}:{c.port}/{c.transport}
                    </td>
                    <td>{c.status}</td>
                    <td>{c.has_credentials ? (c.credentials_valid ? 'set' : 'set, rejected by the carrier') : 'none'}</td>
                    <td>{c.numbers}</td>
                    <td>{when(c.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <h2>Numbers</h2>
      <Loaded state={numbers} what="numbers">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No phone numbers.</Empty>
          ) : (
            <table data-testid="numbers">
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Connection</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((n) => (
                  <tr key={n.id}>
                    <td>{n.number}</td>
                    <td>
                      {n.connection_id ? <code>{n.connection_id}</code> : '—'}
                      {n.connection_status && n.connection_status !== 'active' ? ` (${n.connection_status})` : ''}
                    </td>
                    <td>{n.provider ?? '—'}</td>
                    <td>{when(n.created_at)}</td>
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
