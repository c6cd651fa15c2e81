// Speech synthesis of translations for the party who should hear them. Synthesis starts as soon as
// a translation arrives; the audio of one listener is released in the order the translations came.
import type { FallbackNotice, TtsEngine, VoiceSettings } from '../../speech/index.js';
import { PARTIES, type Party } from '../contracts.js';
import type { Frame, TranslationFrame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export const TRANSLATED_SPEAKER_LABEL = (p: Party): string => `translated_${p}`;

export class TtsProcessor extends FrameProcessor {
  private readonly tails = new Map<Party, Promise<void>>();

  constructor(
    private readonly tts: TtsEngine | null,
    private readonly voice: VoiceSettings,
  ) {
    super();
    for (const p of PARTIES) this.tails.set(p, Promise.resolve());
  }

  process(frame: Frame): void {
    this.push(frame);
    if (frame.kind !== 'translation' || !frame.speakTo || !this.tts) return;
    const to = frame.speakTo;
    const speaker = TRANSLATED_SPEAKER_LABEL(frame.party);
    if (this.tts.synthesizeStream) {
      // Streaming engines: chunks are buffered from now on and released as they come once the
      // listener's earlier speech is out, so the first audio plays before synthesis ends.
      const chunks = this.bufferStream(frame);
      this.tails.set(
        to,
        this.tails.get(to)!.then(async () => {
          for await (const pcm of chunks) if (pcm.length) this.push({ kind: 'tts_audio', to, speaker, pcm });
        }),
      );
      return;
    }
    const audio = this.synthesize(frame);
    this.tails.set(
      to,
      this.tails
        .get(to)!
        .then(() => audio)
        .then((pcm) => {
          if (pcm && pcm.length) this.push({ kind: 'tts_audio', to, speaker, pcm });
        }),
    );
  }

  /** Starts synthesis at once (a generator body would wait for its first next()) and returns the reader. */
  private bufferStream(frame: TranslationFrame): AsyncIterable<Int16Array> {
    const queue: Int16Array[] = [];
    let done = false;
    let wake: (() => void) | null = null;
    const notify = (): void => {
      wake?.();
      wake = null;
    };
    void (async () => {
      try {
        for await (const pcm of this.tts!.synthesizeStream!(frame.text, frame.to, this.voice, this.fallbackNotice(frame))) {
          queue.push(pcm);
          notify();
        }
      } catch (err) {
        this.reportFailure(frame, err);
      } finally {
        done = true;
        notify();
      }
    })();
    return (async function* drain(): AsyncGenerator<Int16Array> {
      for (;;) {
        if (queue.length) {
          yield queue.shift()!;
          continue;
        }
        if (done) return;
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    })();
  }

  /** The embedded engine spoke instead of the failed remote one: reported, the audio still plays. */
  private fallbackNotice(frame: TranslationFrame): FallbackNotice {
    return (n) => this.push({ kind: 'error', code: 'engine_error', party: frame.party, message: n.message });
  }

  private reportFailure(frame: TranslationFrame, err: unknown): void {
    const code = (err as { code?: string }).code ?? 'tts_failed';
    this.push({
      kind: 'error',
      code: 'engine_error',
      party: frame.party,
      message: `speech synthesis (${frame.to}) for ${frame.speakTo} failed (${code}): ${(err as Error).message}`,
    });
  }

  private async synthesize(frame: TranslationFrame): Promise<Int16Array | null> {
    try {
      return await this.tts!.synthesize(frame.text, frame.to, this.voice, this.fallbackNotice(frame));
    } catch (err) {
      this.reportFailure(frame, err);
      return null;
    }
  }
}
