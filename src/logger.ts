import { pino, type Logger } from 'pino';
import type { Config } from './config/index.js';

/** JSON logs to stdout; request logs carry `request_id`, session logs `session_id`, SIP logs `call_id`. */
export function createLogger(config: Pick<Config, 'logLevel' | 'nodeId'>): Logger {
  return pino({ level: config.logLevel, base: { node: config.nodeId }, timestamp: pino.stdTimeFunctions.isoTime });
}
