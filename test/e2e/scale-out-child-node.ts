// A gateway in its own process for scale-out-node-lost.test.ts, so the test can kill it (SIGKILL)
// the way a node dies: no shutdown, no claims released. Its whole configuration comes as JSON in
// VB_CHILD_CONFIG; it prints one line `{"httpUrl": …}` once it serves.
import { loadConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/server.js';

const config = loadConfig({}, JSON.parse(process.env.VB_CHILD_CONFIG ?? '{}') as Record<string, unknown>);
const gw = await startGateway(config, { migrate: false });
process.stdout.write(`${JSON.stringify({ httpUrl: gw.httpUrl })}\n`);
