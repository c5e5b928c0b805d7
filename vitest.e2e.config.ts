import { defineConfig } from 'vitest/config';

// Real-dsh end-to-end tests: `npx vitest run -c vitest.e2e.config.ts`.
// The first run installs dsh into $DIDA_TODO_E2E_CACHE (default ~/.cache/dida-todo-e2e); later runs reuse it.
export default defineConfig({
  test: {
    include: ['tests/e2e/**/*.e2e.test.ts'],
    testTimeout: 180_000,
    // beforeAll may install dsh cold (each install step is bounded to 8 minutes by scripts/install-dsh.mjs).
    hookTimeout: 20 * 60_000,
    teardownTimeout: 30_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
