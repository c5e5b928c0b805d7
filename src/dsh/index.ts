// The dsh plugin entry: named exports only (no default export), wiring dsh to the host-neutral engine.
import { RowConfig } from './row-config';

export const name = 'dida-todo';
/** Services every dsh profile provides; optional ones are read with ctx.get. */
export const inject: string[] = [];
export const Config = RowConfig;
export type Config = RowConfig;

export function apply(_ctx: unknown, config: Config): void {
  process.stderr.write(`[dida-todo] loaded (locale ${config.locale}, auto-continue ${config.maxAutoContinue})\n`);
}
