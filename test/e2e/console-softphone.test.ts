// The browser softphone in a real Chromium whose fake microphone plays a speech WAV (flite + sox,
// made here): the page creates a session with its cookie, streams 8 kHz mu-law over the session's
// socket and shows the live transcript with its translation while the translated audio plays.
// Then the session page shows that transcript and plays a recording through <audio>.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { newId } from '../../src/ids.js';
import { launchChromium, signIn, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';

const run = promisify(execFile);
const SPEECH = 'i would like to check my account balance';

let t: ConsoleGateway;
let browser: Browser;
let dir: string;
let org: { orgId: string };
const shots = process.env.CONSOLE_SCREENSHOTS_DIR;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-console-'));
  // The fake microphone loops this file: speech with a second of silence either side.
  const spoken = path.join(dir, 'spoken.wav');
  await run('flite', ['-t', SPEECH, '-o', spoken]);
  await run('sox', [spoken, '-r', '16000', '-c', '1', '-b', '16', path.join(dir, 'mic.wav'), 'pad', '1', '1.5']);
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

describe('softphone', () => {
  let sessionId: string;

  it('speaks English from the microphone and shows the live transcript, the Spanish translation and the translated audio', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'dev@example.com');
    await page.getByRole('link', { name: 'Try it' }).click();
    await page.getByLabel('Mode').selectOption('bidirectional_translation');
    await page.getByLabel('Agent language (source)').fill('en');
    await page.getByLabel('Customer language (target)').fill('es');
    await page.getByLabel('I speak as').selectOption('agent');
    await page.getByRole('button', { name: 'Start talking' }).click();

    const translation = page.getByTestId('translation').first();
    await translation.waitFor({ timeout: 150_000 });
    expect(await translation.textContent()).toMatch(/^es: .*(saldo|cuenta)/i);
    const said = await page.getByTestId('live-transcript').textContent();
    expect(said).toMatch(/account/);
    // The translation is spoken back: audio.output frames arrive and the worklet plays them.
    await expect.poll(async () => Number(await page.getByTestId('out-frames').textContent()), { timeout: 60_000, interval: 500 }).toBeGreaterThan(25);
    if (shots) await page.screenshot({ path: path.join(shots, 'console-softphone.png') });

    sessionId = (await page.getByRole('link', { name: /^sess_/ }).textContent())!;
    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.getByTestId('phone-state').getByText(/ended|closed/).waitFor({ timeout: 30_000 });
    await context.close();
  }, 240_000);

  it('shows the ended session with its transcript and translations, and plays its recording in the page', async () => {
    // A ready recording of the session (written here as the recordings job would: a file in the
    // data directory and its row), so the page's player goes through GET /v1/recordings/{id}/audio.
    const file = path.join(dir, 'recording.wav');
    await run('sox', [path.join(dir, 'mic.wav'), '-r', '8000', file]);
    const recId = newId('rec');
    await t.gw.db.query(
      `INSERT INTO recordings (id, session_id, org_id, channel, status, format, duration, size, file_path)
       VALUES ($1, $2, $3, 'mixed', 'ready', 'wav', $4, $5, $6)`,
      [recId, sessionId, org.orgId, Number((await run('soxi', ['-D', file])).stdout), (await stat(file)).size, file],
    );
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'dev@example.com');
    await page.goto(`${t.base}/console/sessions/${sessionId}`);
    await page.getByTestId('session-status').getByText('ended').waitFor({ timeout: 30_000 });
    const turn = page.locator('ol.transcript li').first();
    await turn.waitFor();
    expect(await turn.textContent()).toMatch(/account/);
    expect(await turn.locator('.translation').textContent()).toMatch(/saldo|cuenta/i);

    const audio = page.locator(`audio[data-recording="${recId}"]`);
    await audio.waitFor();
    const played = await audio.evaluate(async (el: HTMLAudioElement) => {
      el.muted = true;
      await el.play();
      await new Promise<void>((resolve) => {
        const check = () => (el.currentTime > 0.5 ? resolve() : setTimeout(check, 100));
        check();
      });
      return { duration: el.duration, currentTime: el.currentTime };
    });
    expect(played.duration).toBeGreaterThan(2);
    expect(played.currentTime).toBeGreaterThan(0.5);
    if (shots) await page.screenshot({ path: path.join(shots, 'console-session.png'), fullPage: false });
    await context.close();
  }, 120_000);
});
