import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Router, Route } from 'preact-iso';
import { api, setCsrfToken, CallError } from './api/client';
import { MeContext, type Me } from './session';
import { Layout } from './components/layout';
import { Loading, ErrorBox } from './components/states';
import { SignIn } from './pages/sign-in';
import { SetPassword } from './pages/set-password';
import { Overview } from './pages/overview';
import { Keys } from './pages/keys';
import { Webhooks } from './pages/webhooks';
import { Sessions, LiveSessions } from './pages/sessions';
import { SessionPage } from './pages/session-page';
import { Agents } from './pages/agents';
import { Users } from './pages/users';
import { Telephony } from './pages/telephony';
import { Softphone } from './softphone/softphone-page';
import { Nodes } from './operator/nodes';
import { LiveCalls } from './operator/calls';
import { Organizations } from './operator/organizations';
import { SipLadder } from './operator/sip-ladder';
import { NotFound } from './pages/not-found';
import './styles.css';

function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<unknown>();

  const loadMe = () => {
    api.GET('/console/api/auth/me').then(({ data, response }) => {
      if (response.status === 401) return setMe(null);
      if (!response.ok) return setError(new CallError(response.status, null));
      const m = data as unknown as Me;
      setCsrfToken(m.csrf_token);
      setMe(m);
    }, setError);
  };
  useEffect(loadMe, []);

  const signOut = async (everywhere: boolean) => {
    await api.POST(everywhere ? '/console/api/auth/sign_out_everywhere' : '/console/api/auth/sign_out');
    setMe(null);
  };

  if (location.pathname.startsWith('/console/set-password')) return <SetPassword />;
  if (error)
    return (
      <main class="narrow">
        <ErrorBox error={error} />
      </main>
    );
  if (me === undefined)
    return (
      <main class="narrow">
        <Loading what="the console" />
      </main>
    );
  if (me === null) return <SignIn onSignedIn={loadMe} />;

  const operator = me.user.role === 'operator';
  return (
    <MeContext.Provider value={{ me, signOut }}>
      <LocationProvider scope="/console">
        <Layout>
          {operator ? (
            <Router>
              <Route path="/console/" component={Nodes} />
              <Route path="/console/operator/calls" component={LiveCalls} />
              <Route path="/console/operator/organizations" component={Organizations} />
              <Route path="/console/operator/sip" component={SipLadder} />
              <Route default component={NotFound} />
            </Router>
          ) : (
            <Router>
              <Route path="/console/" component={Overview} />
              <Route path="/console/keys" component={Keys} />
              <Route path="/console/webhooks" component={Webhooks} />
              <Route path="/console/sessions" component={Sessions} />
              <Route path="/console/live" component={LiveSessions} />
              <Route path="/console/sessions/:id" component={SessionPage} />
              <Route path="/console/agents" component={Agents} />
              <Route path="/console/try" component={Softphone} />
              <Route path="/console/users" component={Users} />
              <Route path="/console/numbers" component={Telephony} />
              <Route default component={NotFound} />
            </Router>
          )}
        </Layout>
      </LocationProvider>
    </MeContext.Provider>
  );
}

render(<App />, document.getElementById('app')!);
