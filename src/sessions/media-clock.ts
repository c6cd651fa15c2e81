// The process-wide 20 ms clock the live sessions' output pacers share (tests pass their own).
import { MediaClock } from '../media/index.js';

export { MediaClock, type TickListener, type TickSource } from '../media/index.js';

export const sharedMediaClock = new MediaClock();
