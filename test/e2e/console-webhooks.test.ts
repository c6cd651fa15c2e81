// Webhook endpoints from the portal in a real browser, against the /v1/webhook_endpoints routes and a
// real HTTP receiver on loopback: add an endpoint (secret shown once), send a test event, see it
// arrive signed and appear in the delivery log; rotate the secret; disable the endpoint.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';
import { defined } from '../helpers/defined.js';

let t: ConsoleGateway;
let browser: Browser;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ body: any; signature: string | undefined }> = [];
let failing = true;
const failReceived: any[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/fail') {
        failReceived.push(JSON.parse(body));
        if (failing)
          res.writeHead(500, { 'content-type': 'application/json', 'x-receiver': 'fail-mode' }).end(JSON.stringify({ error: 'nope', pad: 'x'.repeat(6000) }));
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('accepted now');
        return;
      }
      received.push({ body: JSON.parse(body), signature: req.headers['service-signature'] as string | undefined });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  t = await startConsoleGateway({ overrides: { webhooks: { allowLoopbackHttp: true, pollIntervalMs: 200, retryScheduleSeconds: [0.2] } } });
  const org = await t.createOrg();
  await t.addUser(org.orgId, 'owner@example.com', 'owner');
  await t.addUser(org.orgId, 'viewer@example.com', 'viewer');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('webhook endpoints in the portal', () => {
  it('adds an endpoint, sends a test event that arrives signed, and shows the attempt in the delivery log', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await signIn(page, t.base, 'owner@example.com');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('HTTPS URL').fill(receiverUrl);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('wh-secret').textContent({ timeout: 15_000 }))!;
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator('tr', { hasText: receiverUrl });
    await row.getByText('enabled').waitFor();

    await row.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => received.filter((r) => r.body.type === 'webhook.test').length, { timeout: 30_000 }).toBe(1);
    expect(defined(received[0], 'test delivery').signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const log = page.getByTestId('deliveries');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return (await log.textContent().catch(() => '')) ?? '';
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toMatch(/webhook\.test.*delivered.*200/);
    expect(await log.textContent()).toContain(defined(received[0], 'test delivery').body.id);

    const before = secret;
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await expect.poll(async () => page.getByTestId('wh-secret').textContent(), { timeout: 15_000 }).not.toBe(before);

    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('disabled').waitFor();
    if (process.env.CONSOLE_SCREENSHOTS_DIR) await page.screenshot({ path: `${process.env.CONSOLE_SCREENSHOTS_DIR}/console-webhooks.png` });
    await page.close();
  });

  it("shows a failed attempt's request and response, and replays the event until it is delivered", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'owner@example.com');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const failUrl = receiverUrl.replace('/hooks', '/fail');
    await page.getByLabel('HTTPS URL').fill(failUrl);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const row = page.locator('tr', { hasText: failUrl });
    await row.getByText('enabled').waitFor({ timeout: 15_000 });
    await row.getByRole('button', { name: 'Send test' }).click();
    await row.getByRole('button', { name: 'Deliveries' }).click();

    // One attempt and one retry (schedule [0.2 s]), both answered 500: the delivery is failed.
    const log = page.getByTestId('deliveries');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return (await log.textContent().catch(() => '')) ?? '';
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toMatch(/webhook\.test2failed500/);
    expect(failReceived.length).toBe(2);
    const eventId = failReceived[0].id as string;

    await page.getByRole('button', { name: `Details of attempt 2 of ${eventId}` }).click();
    const detail = page.getByTestId('attempt-detail');
    await detail.waitFor({ timeout: 15_000 });
    expect(await detail.textContent()).toContain('x-receiver: fail-mode');
    const response = (await page.getByTestId('attempt-response').textContent())!;
    expect(response).toContain('"error":"nope"');
    // Bounded: the first 4 KB of the 6 KB body.
    expect(response.length).toBeLessThanOrEqual(4096);
    expect(JSON.parse((await page.getByTestId('attempt-request').textContent())!)).toEqual(failReceived[1]);

    // The replay route is a state change: refused without the CSRF token, and to a viewer.
    const cookie = (await context.cookies()).find((c) => c.name === 'vb_console')!;
    const replayPath = `${t.base}/console/api/webhook_endpoints/${failReceived[0].data?.endpoint_id ?? 'x'}/deliveries/${eventId}/replay`;
    const noCsrf = await fetch(replayPath, { method: 'POST', headers: { cookie: `vb_console=${cookie.value}` } });
    expect(noCsrf.status).toBe(403);
    expect((await noCsrf.json()).error.code).toBe('csrf_token_invalid');
    const viewer = await browser.newContext();
    const viewerPage = await viewer.newPage();
    await signIn(viewerPage, t.base, 'viewer@example.com');
    const viewerCsrf = await viewerPage.evaluate(async () => (await (await fetch('/console/api/auth/me')).json()).csrf_token as string);
    const viewerCookie = (await viewer.cookies()).find((c) => c.name === 'vb_console')!;
    const refused = await fetch(replayPath, { method: 'POST', headers: { cookie: `vb_console=${viewerCookie.value}`, 'x-csrf-token': viewerCsrf } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe('insufficient_permissions');
    await viewer.close();

    failing = false;
    await page.getByRole('button', { name: `Replay ${eventId}` }).click();
    await page.getByText(`Event ${eventId} queued again.`).waitFor({ timeout: 15_000 });
    await expect.poll(() => failReceived.length, { timeout: 30_000 }).toBe(3);
    expect(failReceived[2].id).toBe(eventId);
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return (await log.textContent().catch(() => '')) ?? '';
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toMatch(/webhook\.test3delivered200/);
    await page.getByRole('button', { name: `Details of attempt 3 of ${eventId}` }).click();
    await expect
      .poll(
        () =>
          page
            .getByTestId('attempt-response')
            .textContent()
            .catch(() => ''),
        { timeout: 15_000 },
      )
      .toBe('accepted now');
    if (process.env.CONSOLE_SCREENSHOTS_DIR)
      await page.screenshot({ path: `${process.env.CONSOLE_SCREENSHOTS_DIR}/console-webhook-attempt.png`, fullPage: true });
    await context.close();
  });
});
