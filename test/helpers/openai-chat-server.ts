// A local server speaking the OpenAI chat-completions wire protocol (POST /v1/chat/completions with
// stream: true → `text/event-stream` of `data: {chat.completion.chunk}` events, `tool_calls` deltas
// with the arguments split across chunks, `data: [DONE]`; without stream → one `chat.completion`
// JSON body; errors as `{ "error": { … } }` bodies).
// No LLM is reachable from the test machine, so each test scripts the replies in order.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptedReply =
  | { text: string; chunkSize?: number; gapMs?: number }
  | { toolCalls: Array<{ id: string; name: string; arguments: string }>; chunkSize?: number }
  | { status: number; error: string }
  /** Accepts the request and never answers (client timeout). */
  | { hang: true };

export interface ChatRequest {
  headers: IncomingMessage['headers'];
  body: { model: string; messages: Array<Record<string, any>>; stream?: boolean; temperature?: number; tools?: unknown[] };
}

export class OpenAiChatServer {
  readonly requests: ChatRequest[] = [];
  readonly replies: ScriptedReply[] = [];
  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<OpenAiChatServer> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void self.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const self = new OpenAiChatServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    return self;
  }

  private async handle(req: IncomingMessage, raw: string, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      return;
    }
    const body = JSON.parse(raw) as ChatRequest['body'];
    this.requests.push({ headers: req.headers, body });
    const reply = this.replies.shift() ?? { text: 'I have nothing more to say.' };
    if ('hang' in reply) return;
    if ('status' in reply) {
      res
        .writeHead(reply.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: reply.error, type: 'server_error', code: null } }));
      return;
    }
    const id = `chatcmpl-${this.requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    if (body.stream !== true && 'text' in reply) {
      const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
      const message = { role: 'assistant', content: reply.text };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: 'stop' }], usage }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    const size = reply.chunkSize ?? 6;
    send({ role: 'assistant', content: '' });
    if ('text' in reply) {
      for (let i = 0; i < reply.text.length; i += size) {
        send({ content: reply.text.slice(i, i + size) });
        if (reply.gapMs) await new Promise((r) => setTimeout(r, reply.gapMs));
      }
      send({}, 'stop');
    } else {
      reply.toolCalls.forEach((c, index) => {
        send({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
        for (let i = 0; i < c.arguments.length; i += size) send({ tool_calls: [{ index, function: { arguments: c.arguments.slice(i, i + size) } }] });
      });
      send({}, 'tool_calls');
    }
    res.end('data: [DONE]\n\n');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
