// The softphone joining as the agent party of a session whose customer is on a phone leg, in a
// real Chromium with the embedded engines: a SIPp caller (the test's own UDP socket as its RTP end)
// calls the session's managed number; from the session page the browser joins the live session's
// stream socket as the agent; its fake microphone's English (a flite WAV made here) is transcribed
// and translated into Spanish in the page, and the translated speech reaches the caller over RTP.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';
import { startSipp, eventually, addLoopbackNumber, loopbackSipConfig } from '../helpers/sip-harness.js';
import { RtpPhone } from '../helpers/agents.js';
import { updateOrg } from '../../src/store/index.js';

const run = promisify(execFile);

let t: ConsoleGateway;
let browser: Browser;
let dir: string;
let org: { orgId: string; key: string };
let number: string;
let caller: RtpPhone | undefined;
const shots = process.env.CONSOLE_SCREENSHOTS_DIR;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-console-join-'));
  const spoken = path.join(dir, 'spoken.wav');
  await run('flite', ['-t', 'i would like to check my account balance', '-o', spoken]);
  await run('sox', [spoken, '-r', '16000', '-c', '1', '-b', '16', path.join(dir, 'mic.wav'), 'pad', '1', '1.5']);
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  t = await startConsoleGateway({
    embeddedEngines: true,
    overrides: {
      sip: loopbackSipConfig(rtpBase, { rtpTimeoutSeconds: 120, maxConcurrentCalls: 10 }),
    },
  });
  org = await t.createOrg(500);
  await t.addUser(org.orgId, 'dev@example.com', 'developer');
  await updateOrg(t.gw.db, org.orgId, { sipEnabled: true });
  number = await addLoopbackNumber(t.gw.db, org.orgId);
  browser = await launchChromium([
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-audio-capture=${path.join(dir, 'mic.wav')}`,
  ]);
}, 120_000);
afterAll(async () => {
  caller?.close();
  await browser?.close();
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('joining as the agent party', () => {
  it('joins a live session whose customer is on a phone leg: the agent speaks from the browser, the caller hears the translation', async () => {
    const created = await fetch(`${t.base}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es', routing: { phone_number: number } }),
    });
    expect(created.status).toBe(201);
    const { id } = await created.json();

    // The customer calls the session's number.
    caller = await RtpPhone.open();
    const telephony = t.gw.telephony;
    if (!telephony) throw new Error('the media role did not start telephony');
    const sipp = await startSipp({
      scenario: 'uac-call-long.xml',
      target: `127.0.0.1:${telephony.sipPort}`,
      service: number,
      keys: { rtp_port: String(caller.port) },
      timeoutSeconds: 240,
    });
    await eventually(async () => {
      const { rows } = await t.gw.db.query(`SELECT status FROM sessions WHERE id = $1`, [id]);
      return rows[0]?.status === 'active';
    }, 60_000);

    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'dev@example.com');
    await page.goto(`${t.base}/console/sessions/${id}`);
    await page.getByRole('link', { name: 'Join as the agent' }).click();
    expect(await page.getByLabel('Session id').inputValue()).toBe(id);
    const heardBefore = performance.now();
    await page.getByRole('button', { name: 'Join as the agent' }).click();
    await page.getByTestId('phone-state').getByText('live').waitFor({ timeout: 60_000 });

    // The browser is the agent: its English is transcribed as the agent and translated for the caller.
    const turn = page
      .getByTestId('live-transcript')
      .locator('.turn.agent', { has: page.getByTestId('translation') })
      .first();
    await turn.waitFor({ timeout: 150_000 });
    expect(await turn.textContent()).toMatch(/account/);
    expect(await turn.getByTestId('translation').textContent()).toMatch(/^es: .*(saldo|cuenta)/i);
    // The synthesized Spanish goes to the phone leg (RTP), not back to the browser.
    await eventually(() => caller!.loudSince(heardBefore).length >= 25, 60_000);
    if (shots) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(shots, 'console-join-agent.png') });
    }

    await page.getByRole('button', { name: 'Hang up' }).click();
    await page
      .getByTestId('phone-state')
      .getByText(/ended|closed/)
      .waitFor({ timeout: 30_000 });
    const { rows } = await t.gw.db.query(`SELECT speaker, text FROM transcript_turns WHERE session_id = $1 ORDER BY sequence`, [id]);
    expect(rows.some((r) => r.speaker === 'agent' && /account/.test(r.text))).toBe(true);
    await sipp.done;
    await context.close();
  }, 300_000);
});
