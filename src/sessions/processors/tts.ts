// Speech synthesis of translations for the party who should hear them. Synthesis starts as soon as
// a translation arrives; the audio of one listener is released in the order the translations came.
import type { TtsEngine, VoiceSettings } from '../../speech/index.js';
import { PARTIES, type Party } from '../contracts.js';
import type { Frame, TranslationFrame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export const TRANSLATED_SPEAKER_LABEL = (p: Party): string => `translated_${p}`;

export class TtsProcessor extends FrameProcessor {
  private readonly tails = new Map<Party, Promise<void>>();

  constructor(private readonly tts: TtsEngine | null, private readonly voice: VoiceSettings) {
    super();
    for (const p of PARTIES) this.tails.set(p, Promise.resolve());
  }

  process(frame: Frame): void {
    this.push(frame);
    if (frame.kind !== 'translation' || !frame.speakTo || !this.tts) return;
    const to = frame.speakTo;
    const audio = this.synthesize(frame);
    this.tails.set(to, this.tails.get(to)!.then(() => audio).then((pcm) => {
      if (pcm && pcm.length) this.push({ kind: 'tts_audio', to, speaker: TRANSLATED_SPEAKER_LABEL(frame.party), pcm });
    }));
  }

  private async synthesize(frame: TranslationFrame): Promise<Int16Array | null> {
    try {
      return await this.tts!.synthesize(frame.text, frame.to, this.voice);
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'tts_failed';
      this.push({ kind: 'error', code: 'engine_error', party: frame.party, message: `speech synthesis (${frame.to}) for ${frame.speakTo} failed (${code}): ${(err as Error).message}` });
      return null;
    }
  }
}
