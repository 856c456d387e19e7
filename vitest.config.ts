import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globals: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    sequence: { concurrent: false },
    // Two test files at a time: most of their time is spent waiting on processes, Redis and the
    // sandbox. Every test file isolates itself (its own key prefix, servers on free ports).
    maxWorkers: 2,
    reporters: ['default'],
  },
});
