// "Talk to this agent" in a real Chromium with the embedded engines: from the agents page the
// softphone opens on an ai_agent session with that agent, the browser is the customer, its fake
// microphone (a flite WAV made here) asks a question and the scripted agent's greeting and answer
// appear in the live transcript while its speech plays in the page.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';

const run = promisify(execFile);

let t: ConsoleGateway;
let browser: Browser;
let dir: string;
let org: { orgId: string; key: string };
const shots = process.env.CONSOLE_SCREENSHOTS_DIR;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-console-agent-'));
  const spoken = path.join(dir, 'spoken.wav');
  await run('flite', ['-t', 'what are your opening hours', '-o', spoken]);
  // Silence around the question (the file loops): the greeting, then the answer, have time to be
  // spoken before the question comes again. Customer speech over the agent cuts the agent short
  // (barge-in), so the checks below look at how the agent's turns begin.
  await run('sox', [spoken, '-r', '16000', '-c', '1', '-b', '16', path.join(dir, 'mic.wav'), 'pad', '4', '12']);
  t = await startConsoleGateway({ embeddedEngines: true });
  org = await t.createOrg(500);
  await t.addUser(org.orgId, 'dev@example.com', 'developer');
  browser = await launchChromium([
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-audio-capture=${path.join(dir, 'mic.wav')}`,
  ]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('talk to this agent', () => {
  it('opens the softphone on an ai_agent session with the agent, which greets and answers the question asked into the microphone', async () => {
    const created = await fetch(`${t.base}/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Opening desk',
        language: 'en',
        greeting: 'Hello, this is the front desk.',
        intents: [{ name: 'opening_hours', examples: ['what are your opening hours', 'when are you open'], reply: 'We are open from nine to five.' }],
      }),
    });
    expect(created.status).toBe(201);
    const agent = await created.json();

    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'dev@example.com');
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'Talk to Opening desk' }).click();
    expect(await page.getByLabel('Mode').inputValue()).toBe('ai_agent');
    await expect.poll(() => page.getByLabel('Agent', { exact: true }).inputValue(), { timeout: 15_000 }).toBe(agent.id);
    await page.getByRole('button', { name: 'Start talking' }).click();

    const transcript = page.getByTestId('live-transcript');
    await transcript.locator('.turn.agent .text', { hasText: /^Hello/ }).waitFor({ timeout: 120_000 });
    await transcript.locator('.turn.agent .text', { hasText: /^We are open/ }).waitFor({ timeout: 150_000 });
    expect((await transcript.locator('.turn.customer .text').allTextContents()).join(' / ')).toMatch(/open|hour/);
    // The agent's speech reaches the browser as audio.output and is played.
    expect(Number(await page.getByTestId('out-frames').textContent())).toBeGreaterThan(25);
    if (shots) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(shots, 'console-agent-talk.png') });
    }

    // The session is an ai_agent session with this agent, created by the signed-in user.
    const sessionId = (await page.getByRole('link', { name: /^sess_/ }).textContent())!;
    const session = await (await fetch(`${t.base}/v1/sessions/${sessionId}`, { headers: { authorization: `Bearer ${org.key}` } })).json();
    expect(session).toMatchObject({ mode: 'ai_agent', status: 'active' });
    const { rows } = await t.gw.db.query('SELECT ai_agent FROM sessions WHERE id = $1', [sessionId]);
    expect(rows[0].ai_agent).toMatchObject({ id: agent.id });
    await page.getByRole('button', { name: 'Hang up' }).click();
    await page
      .getByTestId('phone-state')
      .getByText(/ended|closed/)
      .waitFor({ timeout: 30_000 });
    await context.close();
  }, 300_000);
});
