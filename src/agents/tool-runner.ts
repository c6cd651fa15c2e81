// Calls an agent tool's webhook: the arguments are POSTed as JSON, signed like webhook deliveries
// (`service-signature`, src/webhooks), with a timeout; the JSON reply is the result given back to the
// brain. Every failure (timeout, refused connection, non-2xx, bad JSON) becomes a result with
// ok=false and a reason, never an exception: a tool cannot crash a session.
import { SIGNATURE_HEADER, signatureHeader } from '../webhooks/index.js';
import type { AgentTool, ToolCall } from './types.js';

export interface ToolResult {
  ok: boolean;
  result: unknown;
}

export interface ToolRunnerOptions {
  timeoutMs: number;
  /** Secrets signing the request for this organization (newest first); empty: sent unsigned. */
  signingSecrets(orgId: string): Promise<string[]>;
}

/** Name of the organization secret that signs tool webhooks. */
export const TOOL_SIGNING_SECRET = 'tool_signing';

export class ToolRunner {
  constructor(private readonly opts: ToolRunnerOptions) {}

  async run(orgId: string, sessionId: string, tool: AgentTool | undefined, call: ToolCall): Promise<ToolResult> {
    if (!tool) return { ok: false, result: { error: 'unknown_tool', message: `The agent has no tool '${call.name}'.` } };
    if (!tool.webhook_url)
      return {
        ok: false,
        result: { error: 'no_webhook', message: `Tool '${tool.name}' has no webhook_url; the application handles it from the ai_agent.tool_called event.` },
      };
    const body = JSON.stringify({ session_id: sessionId, tool: tool.name, call_id: call.call_id, arguments: call.arguments });
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'voxbridge-agent-tools' };
    try {
      const secrets = await this.opts.signingSecrets(orgId);
      if (secrets.length) headers[SIGNATURE_HEADER] = signatureHeader(secrets, body);
      const res = await fetch(tool.webhook_url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.opts.timeoutMs), redirect: 'error' });
      const text = await res.text();
      if (!res.ok) return { ok: false, result: { error: 'tool_http_error', status: res.status, message: text.slice(0, 500) } };
      try {
        return { ok: true, result: text ? JSON.parse(text) : {} };
      } catch {
        return { ok: false, result: { error: 'tool_bad_response', message: 'The tool did not answer with JSON.' } };
      }
    } catch (err) {
      const e = err as Error;
      const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
      return {
        ok: false,
        result: { error: timedOut ? 'tool_timeout' : 'tool_unreachable', message: timedOut ? `No answer within ${this.opts.timeoutMs} ms.` : e.message },
      };
    }
  }
}
