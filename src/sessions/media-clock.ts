// The process-wide 20 ms clock the live sessions' output pacers share with the RTP endpoints
// (media/processMediaClock; tests pass their own).
import { processMediaClock } from '../media/index.js';

export { MediaClock, FollowingPhase, type TickListener, type TickPhase, type TickSource } from '../media/index.js';

export const sharedMediaClock = processMediaClock;
