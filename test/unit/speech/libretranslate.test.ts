// The LibreTranslate adapter against a fake server speaking its HTTP API.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreTranslateTranslator } from '../../../src/speech/index.js';

let server: Server;
let url: string;
const bodies: unknown[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/languages') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify([
          { code: 'en', name: 'English', targets: ['en', 'es', 'fr'] },
          { code: 'es', name: 'Spanish', targets: ['en', 'es'] },
        ]),
      );
      return;
    }
    if (req.method === 'POST' && req.url === '/translate') {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        const body = JSON.parse(raw) as { q: string; source: string; target: string; format: string };
        bodies.push(body);
        res.setHeader('content-type', 'application/json');
        if (body.q === 'slow') return; // never answers
        if (body.q === 'boom') {
          res.statusCode = 500;
          res.end(JSON.stringify({ error: 'model crashed' }));
          return;
        }
        res.end(JSON.stringify({ translatedText: `${body.target}:${body.q}` }));
      });
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('LibreTranslateTranslator (adapter)', () => {
  it('reads the pairs from /languages', async () => {
    const t = await LibreTranslateTranslator.create({ url, timeoutMs: 2000 });
    expect(t.pairs()).toEqual([
      { from: 'en', to: 'es' },
      { from: 'en', to: 'fr' },
      { from: 'es', to: 'en' },
    ]);
    expect(t.supports('es', 'fr')).toBe(false);
  });

  it('translates with POST /translate', async () => {
    const t = await LibreTranslateTranslator.create({ url, timeoutMs: 2000 });
    expect(await t.translate('hello', 'en', 'es')).toBe('es:hello');
    expect(bodies.at(-1)).toEqual({ q: 'hello', source: 'en', target: 'es', format: 'text' });
    expect(await t.translate('same', 'en', 'en')).toBe('same');
  });

  it('maps failures to SpeechEngineError codes', async () => {
    const t = await LibreTranslateTranslator.create({ url, timeoutMs: 300 });
    await expect(t.translate('boom', 'en', 'es')).rejects.toMatchObject({ code: 'translate_failed', message: /500: model crashed/ });
    await expect(t.translate('slow', 'en', 'es')).rejects.toMatchObject({ code: 'translate_timeout' });
    await expect(t.translate('hi', 'es', 'fr')).rejects.toMatchObject({ code: 'translate_unsupported' });
    await expect(LibreTranslateTranslator.create({ url: 'http://127.0.0.1:1', timeoutMs: 500 })).rejects.toThrow(/unreachable/);
  });
});
