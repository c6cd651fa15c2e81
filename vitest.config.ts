import { defineConfig } from 'vitest/config';

// Tests talk to real PostgreSQL, Redis, SIPp and rtpengine; a busy 2-core machine needs
// generous timeouts. Each file isolates itself (own schema, own Redis prefix, free ports).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
