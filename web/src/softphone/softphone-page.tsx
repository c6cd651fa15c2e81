// "Try it": the browser becomes a party of a new session (POST /v1/sessions with the cookie, then
// the session's stream socket with its token), with the live transcript and translation beside it.
// With ?agent=agt_… it talks to that AI agent (the browser is the customer); with ?session=sess_…
// it joins a live session as its agent party (e.g. the customer is on a phone leg), using the fresh
// stream token GET /v1/sessions/{id} issues while the session is active.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, unwrap, CallError } from '../api/client';
import { ErrorBox, useLoad } from '../components/states';
import { BrowserPhone } from './browser-phone';

const MODES = ['bidirectional_translation', 'assistive_translation', 'ai_agent', 'help_chat_voice'] as const;
type Mode = (typeof MODES)[number];
/** In these modes the AI is the agent party, so the browser speaks as the customer. */
const AI_MODES: readonly Mode[] = ['ai_agent', 'help_chat_voice'];
interface Line {
  key: string;
  speaker: string;
  text: string;
  translation?: string;
  final: boolean;
}

export function Softphone() {
  const query = new URLSearchParams(location.search);
  const agentParam = query.get('agent') ?? '';
  const joinParam = query.get('session') ?? '';
  const [agentId, setAgentId] = useState(agentParam);
  const [joined, setJoined] = useState(false);
  const [mode, setMode] = useState<Mode>(agentParam ? 'ai_agent' : 'bidirectional_translation');
  const agents = useLoad(
    () => (agentParam || mode === 'ai_agent' ? unwrap(api.GET('/v1/agents', { params: { query: { limit: 100 } } })) : Promise.resolve(null)),
    [mode],
  );
  const [state, setState] = useState('idle');
  const [sessionId, setSessionId] = useState<string>();
  const [lines, setLines] = useState<Line[]>([]);
  const [notices, setNotices] = useState<string[]>([]);
  const [playback, setPlayback] = useState({ played: 0, underruns: 0, dropped: 0, buffered: 0 });
  const [outFrames, setOutFrames] = useState(0);
  const [error, setError] = useState<unknown>();
  const phone = useRef<BrowserPhone>();

  useEffect(() => () => phone.current?.end(), []);

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the socket/API, read field by field with checks
  const onMessage = (m: Record<string, any>) => {
    if (m.type === 'audio.output') return setOutFrames(phone.current?.outputFrames ?? 0);
    if (m.type === 'transcript.partial') {
      setLines((ls) => [...ls.filter((l) => l.final || l.speaker !== m.speaker), { key: `p-${m.speaker}`, speaker: m.speaker, text: m.text, final: false }]);
    } else if (m.type === 'transcript.final') {
      setLines((ls) => [
        ...ls.filter((l) => l.final || l.speaker !== m.speaker),
        {
          key: `f-${m.sequence}`,
          speaker: m.speaker,
          text: m.text,
          translation: m.translation ? `${m.translation.language}: ${m.translation.text}` : undefined,
          final: true,
        },
      ]);
    } else if (m.type === 'session.error') {
      setNotices((n) => [...n, `${m.error.code}: ${m.error.message}`]);
    } else if (m.type === 'session.ready') {
      setState('live');
    } else if (m.type === 'session.ended') {
      setState(`ended (${m.reason})`);
    }
  };

  const start = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setError(undefined);
    setLines([]);
    setNotices([]);
    try {
      const body: Record<string, unknown> = { mode, metadata: { source: 'console-softphone' } };
      const source = String(form.get('source') ?? ''),
        target = String(form.get('target') ?? '');
      if (source) body.source_language = source;
      if (target) body.target_language = target;
      if (form.get('record') === 'on') body.recording = { enabled: true };
      if (mode === 'ai_agent') body.ai_agent = { id: String(form.get('agent_id') ?? '') };
      const session = (await unwrap(api.POST('/v1/sessions', { body: body as never }))) as unknown as { id: string; stream: { url: string; token: string } };
      setSessionId(session.id);
      setJoined(false);
      const p = new BrowserPhone({ onState: setState, onMessage, onPlayback: setPlayback });
      phone.current = p;
      await p.start(session.stream.url, session.stream.token, AI_MODES.includes(mode) || form.get('party') === 'customer' ? 'customer' : 'agent');
    } catch (err) {
      setError(err);
      setState('idle');
    }
  };

  const join = async (e: Event) => {
    e.preventDefault();
    const id = String(new FormData(e.currentTarget as HTMLFormElement).get('session_id') ?? '').trim();
    setError(undefined);
    setLines([]);
    setNotices([]);
    try {
      const s = await unwrap(api.GET('/v1/sessions/{id}', { params: { path: { id } } }));
      if (!s.stream)
        throw new CallError(409, {
          error: { type: 'invalid_request_error', code: 'session_not_active', message: `Session ${id} is ${s.status}: only an active session can be joined.` },
        });
      setSessionId(s.id);
      setJoined(true);
      const p = new BrowserPhone({ onState: setState, onMessage, onPlayback: setPlayback });
      phone.current = p;
      await p.start(s.stream.url, s.stream.token, 'agent');
    } catch (err) {
      setError(err);
      setState('idle');
    }
  };

  const running = state !== 'idle' && !state.startsWith('ended') && !state.startsWith('closed');
  return (
    <section>
      <h1>Try it in the browser</h1>
      <div class="softphone">
        <div>
          {sessionId || error ? (
            <div class="card" aria-labelledby="sp-status">
              <h2 id="sp-status">{joined ? 'Joined as the agent' : 'Your session'}</h2>
              <p role="status" aria-live="polite">
                State: <strong data-testid="phone-state">{state}</strong>
                {sessionId ? (
                  <>
                    {' '}
                    · <a href={`/console/sessions/${sessionId}`}>{sessionId}</a>
                  </>
                ) : null}
              </p>
              <p>
                Audio received: <strong data-testid="out-frames">{outFrames}</strong> frames · played {playback.played}, buffered {playback.buffered}, underruns{' '}
                {playback.underruns}
              </p>
              {running ? (
                <button type="button" class="danger" onClick={() => phone.current?.end()}>
                  Hang up
                </button>
              ) : null}
              {error ? <ErrorBox error={error} /> : null}
              {notices.map((n) => (
                <p class="state notice" key={n}>
                  {n}
                </p>
              ))}
            </div>
          ) : null}
          <form class="card" onSubmit={start} aria-labelledby="sp-settings">
            <h2 id="sp-settings">New session</h2>
            <fieldset disabled={running} class="plain">
              <label for="sp-mode">Mode</label>
              <select id="sp-mode" value={mode} onChange={(e) => setMode((e.currentTarget as HTMLSelectElement).value as Mode)}>
                {MODES.map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
              <label for="sp-source">Agent language (source)</label>
              <input id="sp-source" name="source" defaultValue="en" maxLength={2} />
              <label for="sp-target">Customer language (target)</label>
              <input
                id="sp-target"
                key={AI_MODES.includes(mode) ? 'ai' : 'translation'}
                name="target"
                defaultValue={AI_MODES.includes(mode) ? 'en' : 'es'}
                maxLength={2}
              />
              {AI_MODES.includes(mode) ? (
                <p class="state">You speak as the customer; the AI agent answers.</p>
              ) : (
                <>
                  <label for="sp-party">I speak as</label>
                  <select id="sp-party" name="party">
                    <option value="agent">the agent</option>
                    <option value="customer">the customer</option>
                  </select>
                </>
              )}
              <label class="check">
                <input type="checkbox" name="record" /> Record this session
              </label>
              {mode === 'ai_agent' ? (
                <>
                  <label for="sp-agent">Agent</label>
                  {agents.data?.data.length ? (
                    <select
                      id="sp-agent"
                      name="agent_id"
                      value={agentId || agents.data.data[0]?.id}
                      onChange={(e) => setAgentId((e.currentTarget as HTMLSelectElement).value)}

                      required
                    >
                      {agents.data.data.map((a) => (
                        <option key={a.id} value={a.id}>
                          {a.name} ({a.id})
                        </option>
                      ))}
                    </select>
                  ) : (
                    <input id="sp-agent" name="agent_id" defaultValue={agentParam} placeholder="agt_…" required />
                  )}
                </>
              ) : null}
              <div>
                <button type="submit">Start talking</button>
              </div>
            </fieldset>
          </form>
          <form class="card" onSubmit={join} aria-labelledby="sp-join">
            <h2 id="sp-join">Join a live session as the agent</h2>
            <p class="state">For a session whose customer is already connected (e.g. on a phone leg): you become its agent party.</p>
            <fieldset disabled={running} class="plain">
              <label for="sp-join-id">Session id</label>
              <input id="sp-join-id" name="session_id" defaultValue={joinParam} placeholder="sess_…" required />
              <div>
                <button type="submit">Join as the agent</button>
              </div>
            </fieldset>
          </form>
        </div>
        <div class="card">
          <h2>Live transcript</h2>
          {lines.length === 0 ? (
            <p class="state empty">Speak once the state is live.</p>
          ) : (
            <ol class="transcript" aria-live="polite" data-testid="live-transcript">
              {lines.map((l) => (
                <li key={l.key} class={`turn ${l.speaker}${l.final ? '' : ' partial'}`}>
                  <span class="speaker">{l.speaker}</span>
                  <span class="text">{l.text}</span>
                  {l.translation ? (
                    <span class="translation" data-testid="translation">
                      {l.translation}
                    </span>
                  ) : null}
                </li>
              ))}
            </ol>
          )}
        </div>
      </div>
    </section>
  );
}
