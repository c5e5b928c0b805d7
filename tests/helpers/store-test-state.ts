// A sample state schema shared by the store tests and their child processes.
import * as z from 'zod/mini';
import { StateStore } from '../../src/store/state-store';

export const TestStateSchema = z.strictObject({
  counter: z.int(),
  works: z.record(
    z.string(),
    z.strictObject({
      title: z.string(),
      status: z.enum(['open', 'done']),
      notes: z.array(z.string()),
    }),
  ),
});

export type TestState = z.output<typeof TestStateSchema>;

export function emptyTestState(): TestState {
  return { counter: 0, works: {} };
}

export function createTestStateStore(file: string, lockDir: string, staleMs = 2000): StateStore<TestState> {
  return new StateStore({
    file,
    lockDir,
    schema: TestStateSchema,
    version: 1,
    empty: emptyTestState,
    lockOptions: { staleMs, timeoutMs: 10_000 },
  });
}

/** A state of roughly `works * 300` bytes whose every entry depends on `counter`. */
export function largeTestState(counter: number, works = 1000): TestState {
  const state: TestState = { counter, works: {} };
  for (let i = 0; i < works; i++) {
    state.works[`w${i}`] = {
      title: `Work ${i} — revision ${counter}`,
      status: (counter + i) % 2 === 0 ? 'open' : 'done',
      notes: [`note a ${counter}`.repeat(5), `note b ${i}`.repeat(5)],
    };
  }
  return state;
}
