// The browser softphone in a real Chromium whose fake microphone plays a speech WAV (flite + sox,
// made here): the page creates a session with its cookie, streams 8 kHz mu-law over the session's
// socket and shows the live transcript with its translation while the translated audio plays.
// Then the session page shows that transcript, plays the session's recording through <audio> and
// runs an analysis.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
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
    await page.getByLabel('Record this session').check();
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
    await page
      .getByTestId('phone-state')
      .getByText(/ended|closed/)
      .waitFor({ timeout: 30_000 });
    await context.close();
  }, 240_000);

  it('shows the ended session with its transcript and translations, plays its recording in the page and runs an analysis', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'dev@example.com');
    await page.goto(`${t.base}/console/sessions/${sessionId}`);
    await page.getByTestId('session-status').getByText('ended').waitFor({ timeout: 30_000 });
    const turn = page.locator('ol.transcript li').first();
    await turn.waitFor();
    expect(await turn.textContent()).toMatch(/account/);
    expect(await turn.locator('.translation').textContent()).toMatch(/saldo|cuenta/i);

    // The recordings job encodes the session's MP3s after the end; the page shows a player once one is ready.
    const audio = page.locator('audio[data-recording]').first();
    await expect
      .poll(
        async () => {
          if (await audio.count()) return true;
          await page.reload();
          await page.getByTestId('session-status').waitFor({ timeout: 30_000 });
          return false;
        },
        { timeout: 90_000, interval: 2000 },
      )
      .toBe(true);
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
    // What the player relies on to seek: the audio route answers byte ranges for the signed-in cookie.
    const recId = (await audio.getAttribute('data-recording'))!;
    const partial = await page.evaluate(async (id) => {
      const r = await fetch(`/v1/recordings/${id}/audio`, { headers: { range: 'bytes=0-99' } });
      return { status: r.status, range: r.headers.get('content-range'), length: (await r.arrayBuffer()).byteLength };
    }, recId);
    expect(partial).toMatchObject({ status: 206, length: 100 });
    expect(partial.range).toMatch(/^bytes 0-99\/\d+$/);

    await page.getByRole('button', { name: /Analyse this session/ }).click();
    await page.locator('dl.analysis dd').first().getByText('completed').waitFor({ timeout: 90_000 });
    expect(await page.locator('dl.analysis').textContent()).toMatch(/Summary/);
    if (shots) await page.screenshot({ path: path.join(shots, 'console-session.png'), fullPage: false });
    await context.close();
  }, 240_000);
});
