// A local server speaking ElevenLabs' streaming text-to-speech API
// (POST /v1/text-to-speech/{voice_id}/stream?output_format=ulaw_8000, header xi-api-key) with
// espeak-ng behind it: the mu-law 8 kHz answer is sent chunk by chunk while espeak-ng still writes.
// espeak-ng has no stability or similarity_boost; they are recorded, speed changes the rate.
// Error bodies as ElevenLabs sends them: {"detail":{"status","message"}}.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mulawEncode, parseWav, Resampler } from '../../src/media/index.js';
import { defined } from './defined.js';

/** Voice ids the server knows (ElevenLabs' premade "Rachel" and "Adam"), each an espeak-ng voice. */
export const ELEVENLABS_VOICES: Record<string, string> = { '21m00Tcm4TlvDq8ikWAM': 'en-us', pNInz6obpgDQGcFmaJgB: 'en-gb' };

export interface ElevenLabsRequest {
  voiceId: string;
  outputFormat: string | null;
  body: { text?: string; model_id?: string; language_code?: string; voice_settings?: { stability?: number; similarity_boost?: number; speed?: number } };
}

export interface ElevenLabsServer {
  url: string;
  requests: ElevenLabsRequest[];
  close(): Promise<void>;
}

function detail(res: http.ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ detail: { status: code, message } }));
}

export async function startElevenLabsServer(opts: { apiKey: string }): Promise<ElevenLabsServer> {
  const requests: ElevenLabsRequest[] = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      const parts: Buffer[] = [];
      for await (const c of req) parts.push(c as Buffer);
      const url = new URL(req.url ?? '/', 'http://x');
      const m = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname);
      if (req.method !== 'POST' || !m) return detail(res, 404, 'not_found', 'Not Found');
      if (req.headers['xi-api-key'] !== opts.apiKey) return detail(res, 401, 'invalid_api_key', 'Invalid API key');
      let body: ElevenLabsRequest['body'];
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as ElevenLabsRequest['body'];
      } catch {
        return detail(res, 400, 'invalid_json', 'Invalid JSON body');
      }
      const voiceId = decodeURIComponent(defined(m[1], 'voice id'));
      requests.push({ voiceId, outputFormat: url.searchParams.get('output_format'), body });
      if (typeof body.text !== 'string' || !body.text) return detail(res, 422, 'missing_text', 'Field required: text');
      const espeakVoice = ELEVENLABS_VOICES[voiceId];
      if (!espeakVoice) return detail(res, 404, 'voice_not_found', `A voice with the voice_id ${voiceId} was not found.`);
      if (url.searchParams.get('output_format') !== 'ulaw_8000') return detail(res, 400, 'invalid_output_format', 'This test server serves ulaw_8000 only.');
      const speed = body.voice_settings?.speed ?? 1;
      const child = spawn('espeak-ng', ['-v', espeakVoice, '-s', String(Math.round(175 * speed)), '--stdout', '--stdin']);
      child.stdin.end(body.text);
      res.writeHead(200, { 'content-type': 'audio/basic', 'transfer-encoding': 'chunked' });
      const down = new Resampler(22050, 8000);
      let pending = Buffer.alloc(0);
      let header = false;
      for await (const chunk of child.stdout) {
        pending = Buffer.concat([pending, chunk as Buffer]);
        if (!header) {
          if (pending.length < 44) continue;
          parseWav(pending.subarray(0, 44));
          pending = pending.subarray(44);
          header = true;
        }
        const n = (pending.length & ~1) / 2;
        const samples = new Int16Array(n);
        for (let i = 0; i < n; i++) samples[i] = pending.readInt16LE(i * 2);
        pending = pending.subarray(n * 2);
        res.write(Buffer.from(mulawEncode(down.push(samples))));
      }
      res.end(Buffer.from(mulawEncode(down.flush())));
    })().catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
