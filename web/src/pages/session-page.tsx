import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { useMe, canWrite } from '../session';
import { Loaded, Empty, ErrorBox, useLoad, when } from '../components/states';

interface Quality {
  packets_received?: number;
  packets_lost?: number;
  loss_percent?: number;
  jitter_ms?: number;
  rtt_ms?: number;
  mos?: number;
}
interface CallLeg {
  id?: string;
  provider?: string;
  status?: string;
  sip_status?: number;
  party?: string;
  quality?: Quality;
  [k: string]: unknown;
}
interface Turn {
  sequence: number;
  speaker: string;
  language: string;
  text: string;
  translation?: { language: string; text: string };
  timestamp: string;
}
interface Recording {
  id: string;
  channel?: string;
  status: string;
  duration: number;
  format: string;
  created_at: string;
}
interface Analysis {
  id: string;
  status: string;
  summary?: string | null;
  sentiment?: Record<string, string> | null;
  compliance?: { status: string; flags: unknown[] } | null;
  performance?: { score: number } | null;
  error?: string | null;
}

/** A `transcript.segment` event as a transcript turn (the segment id ends with the turn's sequence). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- event JSON, read field by field with checks
function segmentTurn(e: any): Turn | null {
  const seg = e?.data?.segment;
  const sequence = Number(
    String(seg?.id ?? '')
      .split('_')
      .pop(),
  );
  if (!seg || !Number.isInteger(sequence) || typeof seg.text !== 'string') return null;
  const translation = typeof seg.translation === 'string' && seg.translation ? { language: 'translation', text: seg.translation } : undefined;
  return { sequence, speaker: String(seg.speaker), language: String(seg.language ?? ''), text: seg.text, translation, timestamp: String(e.created_at) };
}

function QualityCells({ q }: { q?: Quality }) {
  if (!q) return <td colSpan={4}>not measured on this gateway</td>;
  return (
    <>
      <td>{q.loss_percent ?? '—'}%</td>
      <td>{q.jitter_ms ?? '—'} ms</td>
      <td>{q.rtt_ms ?? '—'} ms</td>
      <td>{q.mos ?? '—'}</td>
    </>
  );
}

export function SessionPage({ id }: { id: string }) {
  const { me } = useMe();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the socket/API, read field by field with checks
  const session = useLoad(async () => (await unwrap(api.GET('/v1/sessions/{id}', { params: { path: { id } } }))) as unknown as Record<string, any>, [id]);
  const transcript = useLoad(
    async () => (await unwrap(api.GET('/v1/sessions/{id}/transcript', { params: { path: { id } } }))) as unknown as { status: string; turns: Turn[] },
    [id],
  );
  const recordings = useLoad(
    async () =>
      (await unwrap(api.GET('/v1/sessions/{id}/recordings', { params: { path: { id }, query: { limit: 100 } } }))) as unknown as { data: Recording[] },
    [id],
  );
  const [analysis, setAnalysis] = useState<Analysis>();
  const [analysisError, setAnalysisError] = useState<unknown>();

  // A live session's events are pushed (Server-Sent Events from /console/api/sessions/{id}/events,
  // fed by PostgreSQL notifications whichever node holds the session): segments are added as they
  // arrive; `ready` (first connect and every reconnect) and `resync` reload the whole transcript.
  const [pushed, setPushed] = useState<Turn[]>([]);
  const [feed, setFeed] = useState<'connecting' | 'live' | 'closed'>('closed');
  const live = session.data?.status === 'active' || session.data?.status === 'created';
  useEffect(() => {
    if (!live) return;
    const source = new EventSource(`/console/api/sessions/${encodeURIComponent(id)}/events`);
    setFeed('connecting');
    source.addEventListener('ready', () => {
      setFeed('live');
      transcript.reload();
    });
    source.addEventListener('resync', () => transcript.reload());
    source.addEventListener('transcript.segment', (m) => {
      const turn = segmentTurn(JSON.parse((m as MessageEvent<string>).data));
      if (turn) setPushed((p) => [...p.filter((t) => t.sequence !== turn.sequence), turn]);
    });
    for (const type of ['session.started', 'session.ended', 'transcript.ready']) source.addEventListener(type, () => session.reload());
    source.onerror = () => setFeed(source.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
    return () => {
      source.close();
      setFeed('closed');
    };
  }, [live, id]);
  const turns = (t: { turns: Turn[] }) => {
    const bySeq = new Map(t.turns.map((x) => [x.sequence, x]));
    for (const x of pushed) if (!bySeq.has(x.sequence)) bySeq.set(x.sequence, x);
    return [...bySeq.values()].sort((a, b) => a.sequence - b.sequence);
  };

  useEffect(() => {
    if (!analysis || analysis.status !== 'processing') return;
    const timer = setTimeout(
      () =>
        unwrap(api.GET('/v1/analyses/{id}', { params: { path: { id: analysis.id } } })).then((a) => setAnalysis(a as unknown as Analysis), setAnalysisError),
      1500,
    );
    return () => clearTimeout(timer);
  }, [analysis]);

  const analyse = async () => {
    try {
      setAnalysisError(undefined);
      setAnalysis((await unwrap(api.POST('/v1/sessions/{id}/analysis', { params: { path: { id } }, body: {} }))) as unknown as Analysis);
    } catch (err) {
      setAnalysisError(err);
    }
  };

  return (
    <section>
      <h1>
        Session <code>{id}</code>
      </h1>
      <Loaded state={session} what="the session">
        {(s) => {
          const legs: CallLeg[] = Array.isArray(s.calls) ? s.calls : s.call ? [s.call] : [];
          return (
            <>
              <h2>Timeline</h2>
              <dl class="timeline">
                <dt>Status</dt>
                <dd data-testid="session-status">
                  {s.status}
                  {s.status === 'active' && canWrite(me) ? (
                    <>
                      {' '}
                      · <a href={`/console/try?session=${encodeURIComponent(id)}`}>Join as the agent</a>
                    </>
                  ) : null}
                </dd>
                <dt>Mode</dt>
                <dd>
                  {s.mode} ({s.source_language ?? 'auto'} → {s.target_language ?? 'auto'})
                </dd>
                <dt>Created</dt>
                <dd>{when(s.created_at)}</dd>
                <dt>Started</dt>
                <dd>{when(s.started_at)}</dd>
                <dt>Ended</dt>
                <dd>
                  {when(s.ended_at)}
                  {s.end_reason ? ` (${s.end_reason})` : ''}
                </dd>
              </dl>
              <h2>Calls</h2>
              {legs.length === 0 ? (
                <Empty>No phone legs in this session.</Empty>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Call</th>
                      <th scope="col">Party</th>
                      <th scope="col">Status</th>
                      <th scope="col">Loss</th>
                      <th scope="col">Jitter</th>
                      <th scope="col">RTT</th>
                      <th scope="col">MOS</th>
                    </tr>
                  </thead>
                  <tbody>
                    {legs.map((c, i) => (
                      <tr key={c.id ?? i}>
                        <td>{c.id ?? '—'}</td>
                        <td>{c.party ?? c.provider ?? '—'}</td>
                        <td>
                          {c.status ?? '—'}
                          {c.sip_status ? ` (${c.sip_status})` : ''}
                        </td>
                        <QualityCells q={c.quality} />
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </>
          );
        }}
      </Loaded>
      <h2>Transcript</h2>
      {live ? (
        <p class="state notice" role="status" data-testid="live-feed">
          {feed === 'live' ? 'Live: new speech appears as it is transcribed.' : feed === 'connecting' ? 'Connecting to the live feed…' : 'Live feed closed.'}
        </p>
      ) : null}
      <Loaded state={transcript} what="the transcript">
        {(t) =>
          turns(t).length === 0 ? (
            <Empty>Nothing said yet.</Empty>
          ) : (
            <ol class="transcript" aria-live={live ? 'polite' : undefined} data-testid="transcript">
              {turns(t).map((turn) => (
                <li key={turn.sequence} class={`turn ${turn.speaker}`}>
                  <span class="speaker">
                    {turn.speaker} ({turn.language})
                  </span>
                  <span class="text">{turn.text}</span>
                  {turn.translation ? (
                    <span class="translation" lang={turn.translation.language}>
                      {turn.translation.language}: {turn.translation.text}
                    </span>
                  ) : null}
                </li>
              ))}
            </ol>
          )
        }
      </Loaded>
      <h2>Recordings</h2>
      <Loaded state={recordings} what="recordings">
        {(r) =>
          r.data.length === 0 ? (
            <Empty>No recordings for this session.</Empty>
          ) : (
            <ul class="recordings">
              {r.data.map((rec) => (
                <li key={rec.id}>
                  <span>
                    {rec.channel ?? 'recording'} · {rec.format} · {rec.duration.toFixed(1)} s · {rec.status}
                  </span>
                  {rec.status === 'ready' ? (
                    <audio controls preload="metadata" src={`/v1/recordings/${rec.id}/audio`} aria-label={`Recording ${rec.id}`} data-recording={rec.id} />
                  ) : null}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <h2>Analysis</h2>
      {canWrite(me) ? (
        <button type="button" onClick={analyse} disabled={analysis?.status === 'processing'}>
          Analyse this session (1 credit)
        </button>
      ) : null}
      {analysisError ? <ErrorBox error={analysisError} /> : null}
      {analysis ? (
        <dl class="analysis">
          <dt>Status</dt>
          <dd>{analysis.status}</dd>
          {analysis.summary ? (
            <>
              <dt>Summary</dt>
              <dd>{analysis.summary}</dd>
            </>
          ) : null}
          {analysis.sentiment ? (
            <>
              <dt>Sentiment</dt>
              <dd>
                customer {analysis.sentiment.customer}, agent {analysis.sentiment.agent}
              </dd>
            </>
          ) : null}
          {analysis.compliance ? (
            <>
              <dt>Compliance</dt>
              <dd>
                {analysis.compliance.status} ({analysis.compliance.flags.length} flags)
              </dd>
            </>
          ) : null}
          {analysis.performance ? (
            <>
              <dt>Performance</dt>
              <dd>{analysis.performance.score}</dd>
            </>
          ) : null}
          {analysis.error ? (
            <>
              <dt>Error</dt>
              <dd>{analysis.error}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      <h2>Events</h2>
      <p class="state notice">The events sent for this session appear in each webhook endpoint's delivery log (Webhooks).</p>
    </section>
  );
}
