// Speech-to-text per party: an SttStream is fed only between `vad_start` and `vad_end`, and every
// utterance comes back as exactly one `transcript_final` (or an `error`) carrying its time bounds.
// Audio frames stop here: nothing downstream needs raw input audio.
import type { SttEngine, SttStream } from '../../speech/index.js';
import { FRAME_MS, PARTIES, type Party } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export interface SttProcessorOptions {
  engine: SttEngine | null;
  /** Language each party speaks; a party whose language the engine cannot transcribe is skipped. */
  languages: Record<Party, string>;
  /** Whether the engine serves this party (decided once per session, see pipeline.ts). */
  enabled: Record<Party, boolean>;
  /** Parties whose language is null and whose stream is opened in detect mode. */
  detect?: Record<Party, boolean>;
  /** The first final naming a language for a detecting party; called before that final goes on. */
  onLanguageDetected?: (party: Party, language: string) => void;
}

interface Utterance {
  startMs: number;
  endMs: number;
  /** Audio written to the engine for it, ms (the timeline may skip where frames were lost). */
  writtenMs: number;
}

class PartyRecognizer {
  stream: SttStream | null = null;
  inSpeech = false;
  /** Utterances sent to the engine and awaiting their final, oldest first. */
  readonly pending: Utterance[] = [];
  lastPartial = '';
}

export class SttProcessor extends FrameProcessor {
  private readonly parties = new Map<Party, PartyRecognizer>();

  constructor(private readonly opts: SttProcessorOptions) {
    super();
    for (const p of PARTIES) this.parties.set(p, new PartyRecognizer());
  }

  process(frame: Frame): void {
    switch (frame.kind) {
      case 'audio': {
        const r = this.parties.get(frame.party)!;
        if (r.inSpeech && r.stream) {
          r.stream.write(frame.pcm);
          const open = r.pending[r.pending.length - 1];
          if (open) open.writtenMs += FRAME_MS;
        }
        return; // raw input audio ends here
      }
      case 'vad_start': {
        this.push(frame);
        if (!this.opts.enabled[frame.party]) return;
        const r = this.parties.get(frame.party)!;
        const stream = this.streamFor(frame.party, r);
        if (!stream) return;
        r.inSpeech = true;
        r.pending.push({ startMs: frame.mediaMs, endMs: frame.mediaMs, writtenMs: frame.preroll.length * FRAME_MS });
        for (const f of frame.preroll) stream.write(f);
        return;
      }
      case 'vad_end': {
        this.push(frame);
        const r = this.parties.get(frame.party)!;
        if (!r.inSpeech || !r.stream) return;
        r.inSpeech = false;
        const open = r.pending[r.pending.length - 1];
        if (open) open.endMs = frame.mediaMs; // vad_start pushed it
        r.stream.endUtterance();
        return;
      }
      default:
        this.push(frame);
    }
  }

  private streamFor(party: Party, r: PartyRecognizer): SttStream | null {
    if (r.stream) return r.stream;
    const engine = this.opts.engine;
    if (!engine) return null;
    const detect = this.opts.detect?.[party] ?? false;
    let stream: SttStream;
    try {
      stream = engine.openStream({ language: this.opts.languages[party], detect });
    } catch (err) {
      this.push({ kind: 'error', code: 'engine_error', party, message: `speech-to-text could not start for ${party} speech: ${(err as Error).message}` });
      return null;
    }
    stream.on('partial', (p) => {
      // A complete hypothesis repeating the last partial is news only for turn-taking.
      if (p.text && !(p.complete && p.text === r.lastPartial)) {
        this.push({ kind: 'transcript_partial', party, language: this.opts.languages[party], text: p.text });
      }
      r.lastPartial = p.text;
      const u = r.pending[0]; // finals come back in order: a complete hypothesis is the oldest's
      if (p.complete && u) {
        this.push({
          kind: 'transcript_progress',
          party,
          text: p.text,
          startMs: u.startMs,
          endMs: u.endMs,
          writtenMs: u.writtenMs,
          decodedMs: p.decodedMs ?? 0,
          stableMs: p.stableMs ?? 0,
        });
      }
    });
    stream.on('final', (f) => {
      const u = r.pending.shift();
      const text = f.text.trim();
      if (!u) return;
      if (!text) {
        this.push({ kind: 'transcript_none', party, startMs: u.startMs }); // silence or noise: no turn
        return;
      }
      if (this.opts.detect?.[party] && f.language) {
        this.opts.detect[party] = false;
        this.opts.languages[party] = f.language;
        this.opts.onLanguageDetected?.(party, f.language);
      }
      const language = this.opts.languages[party];
      this.push({
        kind: 'transcript_final',
        party,
        language,
        text,
        startMs: u.startMs,
        endMs: u.endMs,
        ...(f.confidence !== undefined ? { confidence: f.confidence } : {}),
      });
    });
    // The remote engine failed and the embedded one took over: said once, the session goes on.
    stream.on('fallback', (n) => this.push({ kind: 'error', code: 'engine_error', party, message: n.message }));
    stream.on('error', (e) => {
      const u = r.pending.shift();
      if (u) this.push({ kind: 'transcript_none', party, startMs: u.startMs });
      this.push({ kind: 'error', code: 'engine_error', party, message: `speech-to-text failed for ${party} speech (${e.code}): ${e.message}` });
    });
    r.stream = stream;
    return stream;
  }

  override close(): void {
    if (this.closed) return;
    super.close();
    for (const r of this.parties.values()) {
      r.stream?.close();
      r.stream = null;
    }
  }
}
