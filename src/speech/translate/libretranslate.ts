// Adapter for a LibreTranslate server (self-hosted): GET /languages lists what it can do,
// POST /translate {q, source, target, format:"text"} -> {translatedText}.
import { splitPair } from '../languages.js';
import { SpeechEngineError, type Translator } from '../types.js';

export interface LibreTranslateOptions {
  /** Base address, e.g. http://libretranslate:5000 */
  url: string;
  timeoutMs: number;
  apiKey?: string;
}

interface LtLanguage {
  code: string;
  targets?: string[];
}

export class LibreTranslateTranslator implements Translator {
  readonly name = 'libretranslate';

  private constructor(
    private readonly opts: LibreTranslateOptions,
    private readonly pairSet: Set<string>,
  ) {}

  /** Reads the server's language list once (the pairs the API can offer). */
  static async create(opts: LibreTranslateOptions): Promise<LibreTranslateTranslator> {
    const res = await fetch(new URL('/languages', opts.url), { signal: AbortSignal.timeout(opts.timeoutMs) }).catch((err: Error) => {
      throw new Error(`LibreTranslate at ${opts.url} is unreachable: ${err.message}`);
    });
    if (!res.ok) throw new Error(`LibreTranslate /languages answered ${res.status}`);
    const langs = (await res.json()) as LtLanguage[];
    const pairs = new Set<string>();
    const all = langs.map((l) => l.code);
    for (const l of langs) for (const t of l.targets ?? all) if (t !== l.code) pairs.add(`${l.code}:${t}`);
    return new LibreTranslateTranslator(opts, pairs);
  }

  pairs(): Array<{ from: string; to: string }> {
    return [...this.pairSet].map((k) => {
      return splitPair(k);
    });
  }

  supports(from: string, to: string): boolean {
    return from === to || this.pairSet.has(`${from}:${to}`);
  }

  async translate(text: string, from: string, to: string): Promise<string> {
    if (from === to || text.trim() === '') return text;
    if (!this.supports(from, to)) throw new SpeechEngineError('translate_unsupported', `LibreTranslate has no pair ${from}->${to}`);
    const body: Record<string, string> = { q: text, source: from, target: to, format: 'text' };
    if (this.opts.apiKey) body.api_key = this.opts.apiKey;
    let res: Response;
    try {
      res = await fetch(new URL('/translate', this.opts.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (err) {
      const e = err as Error;
      if (e.name === 'TimeoutError') throw new SpeechEngineError('translate_timeout', `LibreTranslate took longer than ${this.opts.timeoutMs} ms`);
      throw new SpeechEngineError('translate_failed', `LibreTranslate: ${e.message}`);
    }
    const json = (await res.json().catch(() => ({}))) as { translatedText?: string; error?: string };
    if (!res.ok || typeof json.translatedText !== 'string') {
      throw new SpeechEngineError('translate_failed', `LibreTranslate answered ${res.status}: ${json.error ?? 'no translatedText'}`);
    }
    return json.translatedText;
  }

  async close(): Promise<void> {}
}
