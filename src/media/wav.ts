// WAV (RIFF) reading and streaming writing for PCM16 mono.
// The writer appends frames to the file as a call runs (recorder taps: no audio held in
// memory beyond the writes in flight) and fixes the RIFF and data sizes in the header on close.
import { open, type FileHandle } from 'node:fs/promises';

const HEADER_BYTES = 44;

function header(sampleRate: number, channels: number, dataBytes: number): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  const blockAlign = channels * 2;
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + dataBytes, 4);
  b.write('WAVE', 8, 'ascii');
  b.write('fmt ', 12, 'ascii');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // WAVE_FORMAT_PCM
  b.writeUInt16LE(channels, 22);
  b.writeUInt32LE(sampleRate, 24);
  b.writeUInt32LE(sampleRate * blockAlign, 28);
  b.writeUInt16LE(blockAlign, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(dataBytes, 40);
  return b;
}

/** Builds a complete in-memory WAV file (tests, small clips). */
export function encodeWav(samples: Int16Array, sampleRate: number, channels = 1): Buffer {
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  return Buffer.concat([header(sampleRate, channels, data.length), data]);
}

export class WavFileWriter {
  private handle: FileHandle | null = null;
  private opening: Promise<FileHandle> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private dataBytes = 0;
  private closed: Promise<void> | null = null;
  private failure: Error | null = null;

  constructor(
    readonly path: string,
    readonly sampleRate = 8000,
  ) {}

  /** Creates (truncates) the file and writes a provisional header; write() opens lazily too. */
  open(): Promise<void> {
    return this.ensureOpen().then(() => undefined);
  }

  /** Samples written so far. */
  get samples(): number {
    return this.dataBytes / 2;
  }

  get durationMs(): number {
    return (this.samples * 1000) / this.sampleRate;
  }

  /**
   * Queues one chunk (copied, so the caller may reuse its buffer). Writes land in order;
   * errors surface from close().
   */
  write(pcm: Int16Array): void {
    if (this.closed) throw new Error('WavFileWriter: write after close');
    if (pcm.length === 0) return;
    const bytes = Buffer.from(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
    const position = HEADER_BYTES + this.dataBytes;
    this.dataBytes += bytes.length;
    this.chain = this.chain.then(async () => {
      if (this.failure) return;
      try {
        const fh = await this.ensureOpen();
        await fh.write(bytes, 0, bytes.length, position);
      } catch (err) {
        this.failure = err as Error;
      }
    });
  }

  /** Waits for queued writes, rewrites the header with the final sizes and closes. Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.chain;
      const fh = await this.ensureOpen();
      try {
        if (this.failure) throw this.failure;
        await fh.write(header(this.sampleRate, 1, this.dataBytes), 0, HEADER_BYTES, 0);
      } finally {
        await fh.close();
        this.handle = null;
      }
    })();
    return this.closed;
  }

  private ensureOpen(): Promise<FileHandle> {
    if (this.handle) return Promise.resolve(this.handle);
    this.opening ??= (async () => {
      const fh = await open(this.path, 'w');
      await fh.write(header(this.sampleRate, 1, 0), 0, HEADER_BYTES, 0);
      this.handle = fh;
      return fh;
    })();
    return this.opening;
  }
}

export interface ParsedWav {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** PCM16 samples, interleaved when channels > 1. */
  samples: Int16Array;
}

/**
 * Parses a PCM16 WAV file. Tolerates the placeholder sizes streaming producers write
 * (espeak-ng --stdout puts 0x7FFFFFFF-ish sizes in the header): the data runs to the end of the buffer.
 */
export function parseWav(buf: Uint8Array): ParsedWav {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < 12 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') {
    throw new Error('not a RIFF/WAVE file');
  }
  let off = 12;
  let fmt: { format: number; channels: number; sampleRate: number; bits: number } | null = null;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      fmt = {
        format: b.readUInt16LE(body),
        channels: b.readUInt16LE(body + 2),
        sampleRate: b.readUInt32LE(body + 4),
        bits: b.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!fmt) throw new Error('WAV data chunk before fmt chunk');
      // 0xFFFE = WAVE_FORMAT_EXTENSIBLE; its subformat is PCM for the producers we read.
      if ((fmt.format !== 1 && fmt.format !== 0xfffe) || fmt.bits !== 16) {
        throw new Error(`unsupported WAV encoding (format ${fmt.format}, ${fmt.bits} bits); PCM16 only`);
      }
      const end = Math.min(b.length, body + size);
      const bytes = (end - body) & ~1;
      const samples = new Int16Array(bytes / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = b.readInt16LE(body + i * 2);
      return { sampleRate: fmt.sampleRate, channels: fmt.channels, bitsPerSample: fmt.bits, samples };
    }
    off = body + size + (size & 1);
  }
  throw new Error('WAV file has no data chunk');
}
