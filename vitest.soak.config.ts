import { defineConfig } from 'vitest/config';

// Soaks: long runs of real processes, kept out of `npm test` (`npm run soak:poll`).
export default defineConfig({
  test: {
    include: ['tests/soak/**/*.soak.ts'],
    testTimeout: 60 * 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['tests/global-tmp.ts'],
  },
});
