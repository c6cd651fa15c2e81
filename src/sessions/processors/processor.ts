// A pipeline stage (pipecat `FrameProcessor`): one method, process(frame). A stage handles the
// kinds it knows and pushes everything else on unchanged, so stages can be reordered and each one
// is tested alone by linking it to a collector.
import type { Frame } from '../frames.js';

export type FrameSink = (frame: Frame) => void;

export abstract class FrameProcessor {
  private next: FrameSink | null = null;
  protected closed = false;

  /** Sends this stage's output to `next` (another stage's process, or a sink). */
  link(next: FrameProcessor | FrameSink): this {
    this.next = typeof next === 'function' ? next : (f) => next.process(f);
    return this;
  }

  abstract process(frame: Frame): void;

  /** Pushes a frame downstream; frames pushed after close() are dropped (late async results). */
  protected push(frame: Frame): void {
    if (!this.closed && this.next) this.next(frame);
  }

  /** Releases the stage's resources; idempotent. */
  close(): void {
    this.closed = true;
  }
}

/** Links stages in order; returns the first, whose process() is the pipeline's entry. */
export function chain(stages: FrameProcessor[], sink: FrameSink): FrameProcessor {
  const first = stages[0];
  if (!first) throw new Error('chain: a pipeline needs at least one stage');
  stages.forEach((stage, i) => stage.link(stages[i + 1] ?? sink));
  return first;
}
