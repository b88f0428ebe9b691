import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A process warning (listener leak, deprecation, …) fails the test that caused it.
    setupFiles: ['test/setup/fail-on-warning.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real servers on loopback; two cores, so keep the pool small.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The test files of a worker share its module cache: importing the service (and the SDKs it
    // uses) anew for every file cost about 1.5 s each, most of the suite's run. No test relies
    // on a fresh module: every one builds its own orchestrator, store, metrics registry and servers.
    isolate: false,
  },
});
