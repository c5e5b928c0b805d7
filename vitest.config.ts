import { defineConfig } from 'vitest/config';

// `npm test` runs every test once against the kind simulator, and the engine suites once more under each live
// variant of the simulator (src/sim/sim-variants.ts), picked through DIDA_SIM_VARIANT — all but the heavy matrices
// (interleavings, faults, the crash loop), which `npm run test:variants` (DIDA_TODO_ALL_VARIANTS=1) runs under every
// variant and CI runs too. One project alone: `npx vitest run --project live-a`; one file in one project:
// `npx vitest run --project kind tests/…`.
const HEAVY_MATRICES = ['tests/integration/engine-interleavings*.test.ts', 'tests/integration/engine-faults*.test.ts', 'tests/integration/crash-safety.test.ts'];
const ENGINE_SUITES = ['tests/integration/engine-*.test.ts', 'tests/integration/crash-safety.test.ts'];
const ALL_VARIANTS = process.env.DIDA_TODO_ALL_VARIANTS === '1';
const EXCLUDE = ['tests/e2e/**', 'tests/browser/**', 'node_modules/**'];
const LIVE_VARIANTS = ['live-a', 'live-b', 'live-c'];
// The rate-limit variant runs the engine suites that write most (claims, comments, finalize) once more, with its windows
// scaled to a one-second "minute" and the request budget in front; a 429 fails the test (decision 0086).
const RATE_LIMIT_SUITES = [
  'tests/integration/engine-lifecycle.test.ts',
  'tests/integration/engine-claims.test.ts',
  'tests/integration/engine-finalize.test.ts',
  'tests/integration/engine-task-writer.test.ts',
];

export default defineConfig({
  test: {
    exclude: EXCLUDE,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Both cores (the default leaves one idle on a 2-core machine).
    maxWorkers: 2,
    globalSetup: ['tests/global-tmp.ts'],
    projects: [
      // Set explicitly, so a DIDA_SIM_VARIANT left in the shell cannot change what the whole suite runs against.
      { extends: true, test: { name: 'kind', include: ['tests/**/*.test.ts'], env: { DIDA_SIM_VARIANT: 'kind' } } },
      ...LIVE_VARIANTS.map((variant) => ({
        extends: true as const,
        test: { name: variant, include: ENGINE_SUITES, exclude: ALL_VARIANTS ? EXCLUDE : [...EXCLUDE, ...HEAVY_MATRICES], env: { DIDA_SIM_VARIANT: variant } },
      })),
      { extends: true, test: { name: 'rate-limit', include: RATE_LIMIT_SUITES, env: { DIDA_SIM_VARIANT: 'rate-limit' } } },
    ],
  },
});
