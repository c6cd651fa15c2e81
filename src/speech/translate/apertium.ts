// Embedded translation with Apertium (rule-based, offline). Installed pairs are discovered from
// the mode files (/usr/share/apertium/modes/eng-spa.mode -> en->es); each call runs
// `apertium -u <mode>` as a child process, so the event loop never waits on it.
import { readdir } from 'node:fs/promises';
import { SpeechEngineError, type Translator } from '../types.js';
import { splitPair, toIso1 } from '../languages.js';
import { runProcess } from '../run-process.js';

export interface ApertiumOptions {
  timeoutMs: number;
  modesDir?: string;
  binary?: string;
}

export const DEFAULT_APERTIUM_MODES_DIR = '/usr/share/apertium/modes';

/**
 * Reads the mode file names into ISO 639-1 pairs. Variant modes (spa-eng_US) are used only when
 * the plain pair is missing; debugging modes (eng-spa-morph, ...) are skipped.
 */
export async function discoverApertiumModes(modesDir = DEFAULT_APERTIUM_MODES_DIR): Promise<Map<string, string>> {
  let files: string[];
  try {
    files = await readdir(modesDir);
  } catch {
    return new Map();
  }
  const modes = new Map<string, string>(); // "en:es" -> "eng-spa"
  const names = files
    .filter((f) => f.endsWith('.mode'))
    .map((f) => f.slice(0, -'.mode'.length))
    .sort();
  // Plain pairs first so they win over variants.
  names.sort((a, b) => Number(a.includes('_')) - Number(b.includes('_')));
  for (const name of names) {
    const m = /^([a-z]{2,3})(?:_[A-Za-z]+)?-([a-z]{2,3})(?:_[A-Za-z]+)?$/.exec(name);
    if (!m?.[1] || !m[2]) continue;
    const from = toIso1(m[1]);
    const to = toIso1(m[2]);
    if (!from || !to || from === to) continue;
    const key = `${from}:${to}`;
    if (!modes.has(key)) modes.set(key, name);
  }
  return modes;
}

export class ApertiumTranslator implements Translator {
  readonly name = 'apertium';

  private constructor(
    private readonly modes: Map<string, string>,
    private readonly opts: ApertiumOptions,
  ) {}

  static async create(opts: ApertiumOptions): Promise<ApertiumTranslator> {
    return new ApertiumTranslator(await discoverApertiumModes(opts.modesDir), opts);
  }

  pairs(): Array<{ from: string; to: string }> {
    return [...this.modes.keys()].map((k) => {
      return splitPair(k);
    });
  }

  supports(from: string, to: string): boolean {
    return from === to || this.modes.has(`${from}:${to}`);
  }

  async translate(text: string, from: string, to: string): Promise<string> {
    if (from === to || text.trim() === '') return text;
    const mode = this.modes.get(`${from}:${to}`);
    if (!mode) throw new SpeechEngineError('translate_unsupported', `no Apertium pair ${from}->${to}`);
    // -u drops the unknown-word marks (*word) so untranslated names read naturally. The text goes
    // through stdin, never on a command line. The `apertium` wrapper opens /dev/stdin by name,
    // which fails on the socket Node gives a child as stdin, so `cat` turns it into a real pipe;
    // the binary and mode (from our own discovery) are positional parameters, not interpolated.
    const out = (
      await runProcess({
        binary: 'sh',
        args: ['-c', 'cat | "$0" -u -f txt "$1"', this.opts.binary ?? 'apertium', mode],
        input: caseForRules(text, from).replace(/\s+/g, ' ') + '\n',
        timeoutMs: this.opts.timeoutMs,
        failedCode: 'translate_failed',
        timeoutCode: 'translate_timeout',
        label: `apertium ${mode}`,
      })
    ).toString('utf8');
    return out.replace(/[ \t]+/g, ' ').trim(); // blanks left by dropped words
  }

  async close(): Promise<void> {}
}

/**
 * Recognizers return lower-case text; Apertium's rules read case. English "i" is only the pronoun
 * when capitalized ("i would like" → "i Gustaría", "I would like" → "Me gustaría").
 */
export function caseForRules(text: string, from: string): string {
  return from === 'en' ? text.replace(/\bi\b(?=$|[\s'’,.!?])/g, 'I') : text;
}
