import { defineConfig } from 'vitest/config';

// Real-browser tests: `npx vitest run -c vitest.browser.config.ts`.
// Needs Debian's chromium (scripts/ensure-chromium.sh) and dsh (scripts/install-dsh.mjs; ensureDsh() installs it
// into the cache on first use). Screenshots go to test-output/browser/ (git-ignored).
export default defineConfig({
  test: {
    include: ['tests/browser/**/*.browser.test.ts'],
    // The test file runs only under this config (the default config's tests/**/*.test.ts also matches it).
    env: { DIDA_TODO_BROWSER_TEST: '1' },
    testTimeout: 120_000,
    // beforeAll may install dsh cold (bounded by scripts/install-dsh.mjs) and installs the bundle into a fresh home.
    hookTimeout: 20 * 60_000,
    teardownTimeout: 30_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
