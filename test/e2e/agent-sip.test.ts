// ai_agent with the caller on a real phone leg (SIPp signalling, the test's own UDP socket as the
// phone's RTP end, embedded engines): the greeting heard over RTP; escalation with a transfer that
// dials a SIPp UAS as the human and bridges both ways; a refused transfer (486) told to the caller by
// voice while the conversation goes on; barge-in cutting the agent's RTP audio to the caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { concatPcm, silence, synthesizeSpeech } from '../helpers/speech-audio.js';
import { startSipp, eventually, type SippResult, addLoopbackNumber, loopbackSipConfig } from '../helpers/sip-harness.js';
import { createAgentSession, RtpPhone } from '../helpers/agents.js';
import { updateOrg } from '../../src/store/index.js';
import { FALLBACK_REPLY, TRANSFER_FAILED_REPLY } from '../../src/agents/index.js';
import type { Telephony } from '../../src/telephony/index.js';
import type { LiveSession, TranscriptFinal } from '../../src/sessions/index.js';

let t: StreamTestGateway;
let telephony: Telephony;
let number: string;
const phones: RtpPhone[] = [];

beforeAll(async () => {
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  t = await startStreamGateway({
    engines: 'embedded',
    overrides: {
      roles: ['api', 'media', 'worker'],
      sip: loopbackSipConfig(rtpBase),
    },
  });
  if (!t.gw.telephony) throw new Error('the media role did not start telephony');
  telephony = t.gw.telephony;
  await updateOrg(t.gw.db, t.org.orgId, { sipEnabled: true });
  number = await addLoopbackNumber(t.gw.db, t.org.orgId);
}, 60_000);
afterAll(async () => {
  phones.forEach((p) => p.close());
  await t?.stop();
});

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);
const say = async (text: string, tail = 900) => concatPcm(silence(300), await synthesizeSpeech(text, { voice: 'flite' }), silence(tail));

async function phone(): Promise<RtpPhone> {
  const p = await RtpPhone.open();
  phones.push(p);
  return p;
}

const desk = (escalation: Record<string, unknown>, greeting = 'Hello, this is the order desk.') => ({
  name: 'Order desk',
  language: 'en',
  greeting,
  brain: { provider: 'scripted' },
  intents: [{ name: 'opening_hours', examples: ['what are your opening hours', 'when are you open'], reply: 'We are open from nine to five.' }],
  // Keywords that survive a recognizer slip on a loaded machine ("talk to a person" → "…a person").
  escalation: { keywords: ['talk to a person', 'a person', 'human'], message: 'I will hand you over to a colleague.', ...escalation },
});

interface HeardFinal extends TranscriptFinal {
  at: number;
}

/** A caller (SIPp UAC + the test's RTP phone) on an ai_agent session; the session's finals as they come. */
async function call(agent: ReturnType<typeof desk>) {
  const { id } = await createAgentSession(t, agent, { routing: { phone_number: number } });
  const caller = await phone();
  const sipp = await startSipp({
    scenario: 'uac-call-long.xml',
    target: `127.0.0.1:${telephony.sipPort}`,
    service: number,
    keys: { rtp_port: String(caller.port) },
    timeoutSeconds: 180,
  });
  const live: LiveSession = await eventually(() => t.registry.get(id), 30_000);
  const finals: HeardFinal[] = [];
  live.on('final', (f) => finals.push({ ...f, at: performance.now() }));
  await connected(id, caller, sipp);
  const final = (pred: (f: HeardFinal) => boolean, timeoutMs = 60_000) =>
    eventually(() => finals.find(pred), timeoutMs).catch(() => {
      throw new Error(`no such transcript in ${timeoutMs} ms; heard: ${finals.map((f) => `${f.speaker}:"${f.text}"`).join(', ')}`);
    });
  /**
   * The caller says `text` until the agent answers with a turn matching `answer`. A caller the recognizer
   * misheard repeats, as a real one would (on a loaded machine late RTP can garble a word: pocketsphinx
   * once heard "while carl and ignore it" for "what are your opening hours"); three times at most.
   */
  const ask = async (text: string, answer: RegExp): Promise<HeardFinal> => {
    for (let attempt = 1; ; attempt++) {
      const asked = performance.now();
      await caller.speak(await say(text));
      const reply = await final((f) => f.speaker === 'agent' && f.at > asked && (answer.test(f.text) || f.text === FALLBACK_REPLY));
      if (reply.text !== FALLBACK_REPLY) return reply;
      if (attempt === 3) throw new Error(`the agent misheard "${text}" three times`);
    }
  };
  return { id, caller, sipp, live, finals, final, ask };
}

/**
 * Waits for the gateway's RTP at the phone; when it never comes, says why: SIPp's own account if it
 * ended first, else the calls the session has (one CI run timed out here once with no clue).
 */
async function connected(sessionId: string, caller: RtpPhone, sipp: { done: Promise<SippResult> }): Promise<void> {
  let ended: SippResult | undefined;
  void sipp.done.then((r) => (ended = r));
  try {
    await eventually(() => {
      if (ended && !caller.connected) throw new Error(`SIPp ended (code ${ended.code}) before the call connected:\n${ended.errors}\n${ended.stderr}`);
      return caller.connected;
    }, 30_000);
  } catch (err) {
    const { rows } = await t.gw.db.query('SELECT status, disconnect_reason, call_sid FROM calls WHERE session_id = $1', [sessionId]);
    throw new Error(`the gateway's RTP never reached the phone: ${(err as Error).message}; calls of the session: ${JSON.stringify(rows)}`);
  }
}

async function events(sessionId: string, type: string): Promise<any[]> {
  const { rows } = await t.gw.db.query(`SELECT data FROM webhook_events WHERE type = $1 AND data->>'session_id' = $2 ORDER BY created_at`, [type, sessionId]);
  return rows.map((r) => r.data);
}

describe('ai_agent on a SIP phone leg', () => {
  it('escalates with a transfer: dials the human (SIPp UAS) and bridges the caller and the human both ways', async () => {
    const human = await phone();
    const uas = await startSipp({ scenario: 'uas-answer-media.xml', keys: { rtp_port: String(human.port) }, timeoutSeconds: 180 });
    const c = await call(desk({ transfer_to: `sip:human@127.0.0.1:${uas.port}` }));

    // The greeting is heard over RTP.
    await c.final((f) => f.speaker === 'agent' && f.text === 'Hello, this is the order desk.');
    expect(c.caller.loudSince(0).length).toBeGreaterThan(20);

    // "I want to talk to a person": the escalation event, the message, then the dial.
    await c.ask('i want to talk to a person', /colleague/);
    await eventually(() => human.connected, 30_000);
    const [escalation] = await events(c.id, 'ai_agent.escalation_requested');
    expect(escalation).toMatchObject({ session_id: c.id, reason: expect.stringMatching(/^keyword: /) });

    // Bridged: the caller's speech reaches the human's phone as RTP...
    const beforeCaller = performance.now();
    expect(human.loudSince(0)).toHaveLength(0); // nothing but silence until the caller speaks
    await c.caller.speak(await say('hello is anyone there'));
    await eventually(() => human.loudSince(beforeCaller).length >= 25, 20_000);

    // ...and the human's reaches the caller; the AI stays quiet and the human is transcribed as the agent party.
    const aiTurns = c.finals.filter((f) => f.speaker === 'agent').length;
    const beforeHuman = performance.now();
    await human.speak(await say('hi this is the human speaking'));
    await eventually(() => c.caller.loudSince(beforeHuman).length >= 25, 20_000);
    const humanTurn = await c.final((f) => f.speaker === 'agent' && f.at > beforeHuman);
    // The human's words, attributed to the agent party; any of them will do: on a loaded machine the
    // recognizer has heard "hi this is the here and when speaking" (late RTP garbles a word).
    expect(humanTurn.text).toMatch(/human|speaking/);
    expect(
      c.finals
        .filter((f) => f.speaker === 'customer')
        .map((f) => f.text)
        .join(' '),
    ).toMatch(/anyone/);
    expect(c.finals.filter((f) => f.speaker === 'agent' && f.at <= beforeHuman)).toHaveLength(aiTurns);

    await telephony.hangup(c.id, t.org.orgId, {});
    ok(await c.sipp.done);
    ok(await uas.done);
  }, 180_000);

  it('tells the caller by voice when the human refuses (486) and the conversation goes on', async () => {
    const busy = await startSipp({ scenario: 'uas-busy.xml', timeoutSeconds: 180 });
    const c = await call(desk({ transfer_to: `sip:human@127.0.0.1:${busy.port}` }));
    await c.final((f) => f.speaker === 'agent' && /order desk/.test(f.text));

    const message = await c.ask('i want to talk to a person', /colleague/);
    ok(await busy.done); // the INVITE came and was refused
    const failed = await c.final((f) => f.speaker === 'agent' && f.text === TRANSFER_FAILED_REPLY);
    // The failure is spoken over RTP: ~3 s of speech between the escalation message and its end.
    expect(c.caller.heard.filter((h) => h.at > message.at && h.at <= failed.at + 100 && h.rms > 300).length).toBeGreaterThan(40);
    expect(await events(c.id, 'ai_agent.escalation_requested')).toHaveLength(1);

    // The agent is still there: the next question is answered, out loud.
    const beforeQuestion = performance.now();
    const answer = await c.ask('what are your opening hours', /nine to five/);
    expect(answer.text).toBe('We are open from nine to five.');
    expect(c.caller.heard.filter((h) => h.at > beforeQuestion && h.rms > 300).length).toBeGreaterThan(25);

    await telephony.hangup(c.id, t.org.orgId, {});
    ok(await c.sipp.done);
  }, 180_000);

  it("barge-in: the caller's speech stops the agent's RTP audio and the stored turn is marked interrupted", async () => {
    const long =
      'Hello and welcome to the order desk. I can tell you where your order is. I can also tell you our opening hours and our prices. ' +
      'And I can connect you to a colleague at any time. How can I help you today?';
    const c = await call(desk({}, long));
    // The agent is audibly speaking to the phone before the caller cuts in.
    await eventually(() => c.caller.loudSince(0).length >= 25, 30_000);
    const { onsetAt } = await c.caller.speak(await say('what are your opening hours'));
    const cut = await c.final((f) => f.speaker === 'agent' && f.interrupted === true, 30_000);
    expect(long.startsWith(cut.text.replace(/\.$/, '').split(' ').slice(0, 3).join(' '))).toBe(true);
    expect(cut.text.length).toBeLessThan(long.length);
    const question = await c.final((f) => f.speaker === 'customer');

    // The greeting's RTP: loud packets after the onset and before the customer's final (the answer
    // cannot start earlier). Its last one arrives within the barge-in bound: 400 ms of voiced speech
    // (AGENT_BARGE_IN_MIN_SPEECH_MS), VAD and jitter buffer, then the 200 ms stop — measured ~0.7–0.8 s;
    // the bounds are generous because arrival times are taken on this process's (loaded) event loop.
    // Without the drop on barge-in the greeting goes on for seconds.
    const bargeInAt = c.live.lastBargeInAt;
    expect(bargeInAt).toBeGreaterThan(onsetAt);
    const greetingAfterOnset = c.caller.heard.filter((h) => h.at >= onsetAt && h.at < question.at && h.rms > 300);
    const lastGreeting = greetingAfterOnset[greetingAfterOnset.length - 1]?.at ?? onsetAt;
    expect(lastGreeting - onsetAt).toBeLessThan(2000);
    expect(lastGreeting - bargeInAt).toBeLessThan(400);
    // The stream itself goes on (silence) — the agent went quiet, the call did not stall.
    expect(c.caller.heard.filter((h) => h.at > lastGreeting + 100 && h.at < question.at).length).toBeGreaterThan(10);

    await c.final((f) => f.speaker === 'agent' && /nine to five/.test(f.text));
    await c.live.flushStore();
    const { rows } = await t.gw.db.query(`SELECT text, interrupted FROM transcript_turns WHERE session_id = $1 AND speaker = 'agent' ORDER BY sequence`, [
      c.id,
    ]);
    expect(rows[0]).toEqual({ text: cut.text, interrupted: true });
    expect(rows[rows.length - 1]).toEqual({ text: 'We are open from nine to five.', interrupted: false });

    await telephony.hangup(c.id, t.org.orgId, {});
    ok(await c.sipp.done);
  }, 180_000);
});
