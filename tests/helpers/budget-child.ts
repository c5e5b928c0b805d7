// Child process for the shared-budget tests: its own runtime (config.yaml and state folder of the parent's HOME), making
// `count` list reads at `priority` as fast as the budget lets it, then printing what was sent and what was refused.
// Env: HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, DIDA_TODO_TOKEN. Argv: `<count> <foreground|background|poll>`.
import { isDidaError } from '../../src/dida/dida-error';
import { withRequestPriority, type RequestPriority } from '../../src/dida/request-budget';
import { openRuntime } from '../../src/wiring/runtime';

const [countArg, priorityArg] = process.argv.slice(2);
const runtime = openRuntime({ log: (line) => process.stderr.write(`${line}\n`) });
const gateway = await runtime.gateway();
const refused: Array<{ message: string; retryAfterMs?: number }> = [];
let sent = 0;
let other = '';
await withRequestPriority(priorityArg as RequestPriority, async () => {
  for (let i = 0; i < Number(countArg); i++) {
    try {
      await gateway.listProjects();
      sent++;
    } catch (error) {
      if (isDidaError(error) && error.code === 'rate_limited') refused.push({ message: error.message, ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}) });
      else other = error instanceof Error ? error.message : String(error);
    }
  }
});
process.stdout.write(`${JSON.stringify({ sent, refused, other })}\n`);
await runtime.close();
