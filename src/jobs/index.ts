// Public door of jobs/: the periodic sweepers a worker node runs.
export { startInactivitySweeper, type InactivitySweeper, type InactivitySweeperOptions } from './inactivity-sweeper.js';
export { startNodeLostSweeper, type NodeLostSweeper, type NodeLostSweeperOptions } from './node-lost-sweeper.js';
export type { Sweeper } from './periodic-sweep.js';
