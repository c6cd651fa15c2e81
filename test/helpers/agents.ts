// AI agent test helpers: an agent row and an agent session for a stream test gateway, and a local
// tool webhook server that records each signed request and answers with JSON.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { insertAgent, type AgentValues } from '../../src/store/index.js';
import type { StreamTestGateway } from './stream.js';

export async function createAgentSession(
  t: StreamTestGateway,
  agent: AgentValues & { name: string },
  opts: { mode?: 'ai_agent' | 'help_chat_voice'; overrides?: Record<string, unknown> } = {},
): Promise<{ id: string; token: string; agentId: string }> {
  const row = await insertAgent(t.gw.db, t.org.orgId, agent);
  const { id, token } = await t.createSession({ mode: opts.mode ?? 'ai_agent', source_language: 'en', target_language: 'en' });
  await t.gw.db.query('UPDATE sessions SET ai_agent = $2 WHERE id = $1', [id, { id: row.id, ...(opts.overrides ? { overrides: opts.overrides } : {}) }]);
  return { id, token, agentId: row.id };
}

export interface ToolRequest {
  headers: IncomingMessage['headers'];
  rawBody: string;
  body: any;
  receivedAt: number;
}

/** An HTTP tool webhook: `reply` decides status, body and delay per request. */
export class ToolWebhookServer {
  readonly requests: ToolRequest[] = [];
  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(reply: (req: ToolRequest) => { status?: number; body: unknown; delayMs?: number }): Promise<ToolWebhookServer> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const r: ToolRequest = { headers: req.headers, rawBody, body: JSON.parse(rawBody || 'null'), receivedAt: performance.now() };
        self.requests.push(r);
        const out = reply(r);
        setTimeout(() => {
          res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(out.body));
        }, out.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const self = new ToolWebhookServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/tool`);
    return self;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
