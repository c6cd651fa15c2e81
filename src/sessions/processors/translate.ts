// Translation of finals. A final whose party has a route is held until its translation is back, so
// `transcript.final` carries it (SPEC "Streaming socket messages"); a `translation` frame goes first
// so the TTS stage can start speaking without waiting for the transcript to be stored.
// Finals of one party leave in the order they came; a failed translation still lets the final through.
import type { Translator } from '../../speech/index.js';
import { PARTIES, type Party } from '../contracts.js';
import type { Frame, TranscriptFinalFrame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export interface TranslationRoute {
  /** Language to translate this party's speech into. */
  to: string;
  /** The party who hears it spoken, or null for text only (assistive: the agent reads it). */
  speakTo: Party | null;
}

export class TranslateProcessor extends FrameProcessor {
  private readonly tails = new Map<Party, Promise<void>>();

  constructor(
    private readonly translator: Translator | null,
    private routes: Partial<Record<Party, TranslationRoute>>,
  ) {
    super();
    for (const p of PARTIES) this.tails.set(p, Promise.resolve());
  }

  /** New routes once a detected language replanned the session (finals already queued keep theirs). */
  setRoutes(routes: Partial<Record<Party, TranslationRoute>>): void {
    this.routes = routes;
  }

  process(frame: Frame): void {
    if (frame.kind !== 'transcript_final') {
      this.push(frame);
      return;
    }
    const route = this.routes[frame.party];
    if (!route || !this.translator) {
      this.push(frame);
      return;
    }
    const tail = this.tails.get(frame.party)!;
    // Translation starts now; only the release waits for earlier finals of the same party.
    const result = this.translate(frame, route);
    this.tails.set(
      frame.party,
      tail.then(() => result).then((text) => this.release(frame, route, text)),
    );
  }

  private async translate(frame: TranscriptFinalFrame, route: TranslationRoute): Promise<string | null> {
    if (route.to === frame.language) return frame.text;
    try {
      return await this.translator!.translate(frame.text, frame.language, route.to, (n) =>
        this.push({ kind: 'error', code: 'engine_error', party: frame.party, message: n.message }),
      );
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'translate_failed';
      this.push({
        kind: 'error',
        code: 'engine_error',
        party: frame.party,
        message: `translation ${frame.language}->${route.to} of ${frame.party} speech failed (${code}): ${(err as Error).message}`,
      });
      return null;
    }
  }

  private release(frame: TranscriptFinalFrame, route: TranslationRoute, text: string | null): void {
    if (text === null || !text.trim()) {
      this.push(frame);
      return;
    }
    this.push({ kind: 'translation', party: frame.party, from: frame.language, to: route.to, text, speakTo: route.speakTo });
    this.push({ ...frame, translation: { language: route.to, text } });
  }
}
