// Numbers and connections (owners, read-only): what the admin CLI provisioned for the organization.
import { call } from '../api/client';
import { Loaded, Empty, useLoad, when } from '../components/states';

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
  return (
    <section>
      <h1>Numbers and connections</h1>
      <p>
        Provisioned with <code>voxbridge admin</code>; shown read-only.
      </p>
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
