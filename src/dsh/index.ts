// The dsh plugin entry: named exports only (no default export); it only wires dsh to the host-neutral engine, and its
// first load stays small (the engine, the Dida client, zod and yaml load when a session may be bound).
import { LazyHost } from './lazy-host';
import type { HostContext } from './ports';
import { RowConfig } from './row-config';

export const name = 'dida-todo';
/** Services every dsh profile provides; optional ones (goals, systemPrompt, timer) are read with ctx.get. */
export const inject = ['agents', 'tools'];
export const Config = RowConfig;
export type Config = RowConfig;

/** Never throws: a dsh that lacks (or shapes differently) a surface the bundle uses loses only what needs it. */
export function apply(ctx: HostContext, config: Config): void {
  try {
    new LazyHost(ctx, config).start();
  } catch (error) {
    process.stderr.write(`[dida-todo] could not start in this dsh: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
