import { defineConfig } from 'vitest/config';

// The test set StrykerJS runs against each mutant (`npm run test:mutation`): the unit tests and the fast engine and
// tool integration tests over the simulator. Multi-process, crash, soak and CLI suites are left out (too slow per
// mutant); they still run in `npm test`.
// DIDA_TODO_MUTATION_TESTS (comma-separated paths or globs) runs a focused set instead, for a module whose tests are
// few files on a busy machine: its score is then a lower bound of the whole set's.
const focus = process.env.DIDA_TODO_MUTATION_TESTS?.split(',').map((p) => p.trim()).filter(Boolean);

export default defineConfig({
  test: {
    include: focus?.length ? focus : [
      'tests/integration/claim-release.test.ts',
      'tests/integration/engine-facade.test.ts',
      'tests/integration/engine-background-claim.test.ts',
      'tests/integration/engine-step-ops.test.ts',
      'tests/integration/dsh-slash-dida.test.ts',
      'tests/integration/person-controls.test.ts',
      'tests/integration/bindings.test.ts',
      'tests/integration/engine-work-io.test.ts',
      'tests/integration/engine-sync.test.ts',
      'tests/integration/engine-acceptance.test.ts',
      'tests/integration/dsh-pause-guard.test.ts',
      'tests/integration/engine-waiting.test.ts',
      'tests/integration/engine-finalize-answer.test.ts',
      'tests/integration/engine-sync-paths.test.ts',
      'tests/integration/engine-sync-fresh.test.ts',
      'tests/integration/tools-work.test.ts',
      'tests/integration/tools-todo.test.ts',
      'tests/integration/engine-queue-view.test.ts',
      'tests/unit/**/*.test.ts',
      'tests/integration/tools.test.ts',
      'tests/integration/engine-behaviour.test.ts',
      'tests/integration/engine-lifecycle.test.ts',
      'tests/integration/security.test.ts',
      'tests/integration/runtime.test.ts',
      'tests/integration/engine-person-edits.test.ts',
      'tests/integration/engine-phone.test.ts',
      'tests/integration/model-boundary.test.ts',
      'tests/integration/review-evidence.test.ts',
      'tests/integration/route-tags.test.ts',
      'tests/integration/engine-outbox.test.ts',
      'tests/integration/engine-own-creates.test.ts',
      'tests/integration/engine-phone-answers.test.ts',
      'tests/integration/engine-claims.test.ts',
      'tests/integration/engine-task-writer.test.ts',
      'tests/integration/engine-finalize.test.ts',
      'tests/integration/stop-matrix.test.ts',
      'tests/integration/work-usage.test.ts',
      'tests/integration/comment-looks.test.ts',
      'tests/integration/machine-poller.test.ts',
      'tests/integration/machine-poller-upkeep.test.ts',
    ],
    exclude: ['tests/unit/bundle-shape.test.ts', 'tests/unit/bench-stats.test.ts', 'node_modules/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
