// Webhook endpoints from the portal in a real browser, against the /v1/webhook_endpoints routes and a
// real HTTP receiver on loopback: add an endpoint (secret shown once), send a test event, see it
// arrive signed and appear in the delivery log; rotate the secret; disable the endpoint.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';

let t: ConsoleGateway;
let browser: Browser;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ body: any; signature: string | undefined }> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ body: JSON.parse(body), signature: req.headers['service-signature'] as string | undefined });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  t = await startConsoleGateway({ overrides: { webhooks: { allowLoopbackHttp: true, pollIntervalMs: 200 } } });
  const org = await t.createOrg();
  await t.addUser(org.orgId, 'owner@example.com', 'owner');
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
    expect(received[0].signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const log = page.getByTestId('deliveries');
    await expect.poll(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await log.textContent().catch(() => '')) ?? '';
    }, { timeout: 30_000, interval: 1000 }).toMatch(/webhook\.test.*delivered.*200/);
    expect(await log.textContent()).toContain(received[0].body.id);

    const before = secret;
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await expect.poll(async () => page.getByTestId('wh-secret').textContent(), { timeout: 15_000 }).not.toBe(before);

    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('disabled').waitFor();
    if (process.env.CONSOLE_SCREENSHOTS_DIR) await page.screenshot({ path: `${process.env.CONSOLE_SCREENSHOTS_DIR}/console-webhooks.png` });
    await page.close();
  });
});
