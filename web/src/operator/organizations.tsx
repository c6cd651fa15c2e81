import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Loaded, Empty, ErrorBox, useLoad } from '../components/states';

interface Org {
  id: string;
  name: string;
  status: 'active' | 'inactive';
  credits: number;
  credits_used: number;
  max_concurrent_sessions: number;
  rate_limit: number;
  features: string[];
  live_sessions: number;
}

export function Organizations() {
  const orgs = useLoad(async () => (await unwrap(api.GET('/console/api/operator/organizations'))) as unknown as { data: Org[] });
  const [error, setError] = useState<unknown>();
  const change = async (id: string, body: { status?: 'active' | 'inactive'; credits?: number }) => {
    try {
      await unwrap(api.POST('/console/api/operator/organizations/{id}', { params: { path: { id } }, body }));
      setError(undefined);
      orgs.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section>
      <h1>Organizations</h1>
      {error ? <ErrorBox error={error} /> : null}
      <Loaded state={orgs} what="organizations">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No organizations.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Organization</th>
                  <th scope="col">Status</th>
                  <th scope="col">Credits (used)</th>
                  <th scope="col">Limits</th>
                  <th scope="col">Live</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((o) => (
                  <tr key={o.id} data-org-id={o.id}>
                    <td>
                      {o.name} <code>{o.id}</code>
                    </td>
                    <td>{o.status}</td>
                    <td>
                      {o.credits} ({o.credits_used})
                    </td>
                    <td>
                      {o.max_concurrent_sessions} sessions, {o.rate_limit} req/window
                    </td>
                    <td>{o.live_sessions}</td>
                    <td class="actions">
                      <button type="button" class="secondary" onClick={() => change(o.id, { status: o.status === 'active' ? 'inactive' : 'active' })}>
                        {o.status === 'active' ? 'Suspend' : 'Resume'}
                      </button>
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => {
                          const c = prompt(`Credits for ${o.name}`, String(o.credits));
                          if (c !== null && /^\d+$/.test(c)) void change(o.id, { credits: Number(c) });
                        }}
                      >
                        Set credits
                      </button>
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
