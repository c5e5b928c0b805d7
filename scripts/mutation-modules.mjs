#!/usr/bin/env node
// Mutation testing group by group (`npm run test:mutation:modules [-- group…]`): each group names the modules it
// mutates and the focused test set that reaches them, so one group runs in minutes instead of the whole set's hours.
// Figures from a focused set are lower bounds of the whole set's (docs/reliability.md). One Stryker run at a time; the
// reports land in reports/mutation/<group>/ (git-ignored). `--summary` prints the figures of the reports already there.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const UNIT = 'tests/unit/**/*.test.ts';
const it = (...names) => names.map((n) => `tests/integration/${n}.test.ts`);

/** The groups, in the order a full pass runs them. */
const GROUPS = {
  'core-pure': {
    mutate: ['core/queue/route-tags', 'core/queue/queue-policy', 'core/queue/queue-trigger', 'core/evidence/repo-evidence', 'core/continuation/continuation-policy', 'core/work/work-reconcile', 'core/work/item-codec', 'core/time/schedule', 'core/text/text-guard', 'core/tools/tool-specs', 'core/work/step-change', 'core/usage/usage-schema'],
    tests: [UNIT],
  },
  'core-engine': {
    mutate: ['core/engine/work-engine', 'core/engine/sync', 'core/engine/sync-fold', 'core/engine/sync-prune', 'core/engine/session-stops', 'core/review/finalize'],
    tests: [UNIT, ...it('engine-facade', 'engine-background-claim', 'engine-sync', 'engine-sync-paths', 'engine-sync-fresh', 'engine-finalize', 'engine-finalize-answer', 'engine-acceptance', 'engine-phone', 'engine-phone-answers', 'engine-person-edits', 'engine-lifecycle', 'engine-behaviour', 'tools-todo', 'tools-work', 'review-evidence', 'route-tags')],
  },
  'core-work': {
    mutate: ['core/work/work-io', 'core/phone/waiting', 'core/review/acceptance', 'core/engine/queue-view'],
    tests: [UNIT, ...it('engine-work-io', 'engine-waiting', 'engine-acceptance', 'engine-queue-view', 'engine-phone-answers', 'engine-lifecycle')],
  },
  'core-write': {
    mutate: ['core/queue/claims', 'core/queue/claim-holders', 'core/work/outbox', 'core/work/own-creates', 'core/work/task-writer'],
    tests: [UNIT, ...it('engine-claims', 'engine-outbox', 'engine-own-creates', 'engine-task-writer', 'engine-person-edits', 'engine-background-claim', 'claim-release', 'engine-lifecycle')],
  },
  'core-phone': {
    mutate: ['core/phone/phone-answers', 'core/phone/phone-pause'],
    tests: [UNIT, ...it('engine-phone', 'engine-phone-answers', 'engine-waiting', 'person-controls', 'dsh-pause-guard', 'route-tags')],
  },
  // The rest of src/core (rounds three and five): tools, steps, text, usage, phone signals, bindings and releases.
  'core-rest': {
    mutate: ['core/continuation/recovery-window', 'core/continuation/stop-policy', 'core/engine/sync-looks', 'core/engine/work-overview', 'core/phone/comment-looks', 'core/phone/person-controls', 'core/phone/phone-signals', 'core/phone/spend-stop', 'core/queue/bindings', 'core/queue/claim-release', 'core/review/acceptance-report', 'core/steps/step-evidence', 'core/steps/step-ops', 'core/text/locale', 'core/text/model-budget', 'core/text/near-names', 'core/tools/setup-tool', 'core/tools/todo-tool', 'core/tools/todo-work-tool', 'core/tools/tool-args', 'core/tools/tool-runner', 'core/tools/tool-types', 'core/tools/work-view', 'core/usage/usage', 'core/work/usage-records', 'core/work/engine-context'],
    tests: [UNIT, ...it('tools', 'tools-todo', 'tools-work', 'bindings', 'person-controls', 'claim-release', 'comment-looks', 'engine-step-ops', 'engine-phone', 'work-usage', 'engine-acceptance', 'engine-sync', 'review-evidence')],
  },
  'dsh-host': {
    mutate: ['dsh/dsh-host', 'dsh/lazy-host', 'runtime/phone/phone-control', 'runtime/session/clock', 'dsh/prompt-text'],
    tests: [UNIT, ...it('dsh-pause-guard', 'dsh-slash-dida')],
  },
  'dsh-poll': {
    mutate: ['runtime/polling/machine-poller', 'runtime/polling/poll-hand-overs', 'runtime/polling/poller'],
    tests: [UNIT, ...it('machine-poller', 'machine-poller-upkeep')],
  },
  // The rest of src/dsh (rounds four to six): the adapter's trackers, relays, guards, crash recovery and the row.
  'dsh-rest': {
    mutate: ['dsh/adapter-deps', 'runtime/session/agent-tracker', 'runtime/phone/answer-relay', 'runtime/turns/continuation', 'runtime/turns/crash-recovery', 'runtime/turns/idle-settle', 'dsh/index', 'runtime/session/list-sync', 'runtime/session/live-binding', 'dsh/panel', 'runtime/phone/pause-guard', 'runtime/polling/poll-marks', 'runtime/polling/poll-pace', 'runtime/polling/poll-upkeep', 'dsh/ports', 'dsh/prompt', 'dsh/row-config', 'dsh/slash-command-spec', 'dsh/slash-commands', 'runtime/session/stretch-counter', 'dsh/tool-bridge', 'dsh/tool-context', 'dsh/tool-effects', 'runtime/turns/turn-markers', 'runtime/turns/usage-meter'],
    tests: [UNIT, ...it('dsh-pause-guard', 'dsh-slash-dida', 'machine-poller-upkeep')],
  },
  // The small modules whose figures were checked by hand or changed after their round (module-level texts and shapes),
  // and the stray review todos.
  'small': {
    mutate: ['core/tools/tool-specs', 'core/tools/index', 'core/usage/usage-schema', 'core/work/work-state', 'core/phone/phone-pause', 'core/review/stray-reviews', 'dsh/prompt-text', 'runtime/turns/queue-grant', 'runtime/polling/poll-election'],
    tests: [UNIT, ...it('dsh-pause-guard', 'dsh-slash-dida', 'stray-reviews', 'engine-finalize', 'engine-phone')],
  },
};

/** Per module: the score (killed and timed out over every mutant that was not ignored or uncompilable) and the survivors. */
function summarise(group) {
  const file = path.join('reports', 'mutation', group, 'mutation.json');
  if (!existsSync(file)) return console.log(`${group}: no report yet (${file})`);
  const report = JSON.parse(readFileSync(file, 'utf8'));
  for (const [name, { mutants }] of Object.entries(report.files).sort()) {
    const killed = mutants.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
    const left = mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage');
    const score = (100 * killed) / Math.max(1, killed + left.length);
    console.log(`${group}  ${name}: ${score.toFixed(1)} % (${killed}/${killed + left.length}; ${left.length} left)`);
  }
}

const args = process.argv.slice(2);
const summaryOnly = args.includes('--summary');
const chosen = args.filter((a) => !a.startsWith('--'));
const unknown = chosen.filter((g) => !(g in GROUPS));
if (unknown.length) {
  console.error(`unknown group ${unknown.join(', ')}; the groups are: ${Object.keys(GROUPS).join(', ')}`);
  process.exit(2);
}
for (const group of chosen.length ? chosen : Object.keys(GROUPS)) {
  if (!summaryOnly) {
    const { mutate, tests } = GROUPS[group];
    const reports = path.join('reports', 'mutation', group);
    const run = spawnSync('npx', ['stryker', 'run', '--dryRunTimeoutMinutes', '15', '--mutate', mutate.map((m) => `src/${m}.ts`).join(',')], {
      stdio: 'inherit',
      env: { ...process.env, DIDA_TODO_MUTATION_TESTS: tests.join(','), STRYKER_REPORT_DIR: reports, STRYKER_TEMP_DIR: `.stryker-tmp-${group}` },
    });
    if (run.status !== 0) {
      console.error(`${group}: stryker ended with status ${run.status}`);
      process.exit(run.status ?? 1);
    }
  }
  summarise(group);
}
