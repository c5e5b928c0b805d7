// Records a step's repository evidence: the HEAD when it goes in progress, the commits since when it completes.
import type { EngineDeps } from '../work/engine-context';
import type { StepChange } from '../work/step-change';
import type { StepRecord, StepStatus, WorkRecord } from '../work/work-state';

type Transition = { step: StepRecord; from: StepStatus; to: StepStatus };

/** Whether a call may start or complete a step (only then is git asked anything). */
function mayNeedEvidence(changes: readonly StepChange[]): boolean {
  return changes.some((c) => (c.op === 'add' && c.status === 'in_progress') || (c.op === 'update' && (c.status === 'in_progress' || c.status === 'completed')));
}

async function quietly<T>(deps: EngineDeps, what: string, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    // The evidence is extra: a failing read leaves the step without it and never fails the step change.
    deps.log?.(`could not read the repository (${what}): ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** The repository's HEAD in `cwd` when the changes may start or complete a step; undefined otherwise or without git. */
export async function headBefore(deps: EngineDeps, cwd: string | undefined, changes: readonly StepChange[]): Promise<string | undefined> {
  if (!cwd || !deps.evidence || !mayNeedEvidence(changes)) return undefined;
  const evidence = deps.evidence;
  return quietly(deps, 'HEAD', () => evidence.head(cwd));
}

/**
 * Notes `head` on the steps that went in progress and gives each step that completed the commits made since its own
 * start (or, for a step completed without going in progress, since the Work's last step event), with the branch and
 * the web home of the remote. Steps whose base equals `head` get no evidence. The Work remembers `head`.
 */
export async function recordEvidence(deps: EngineDeps, work: WorkRecord, transitions: readonly Transition[], cwd: string, head: string): Promise<void> {
  const evidence = deps.evidence;
  if (!evidence) return;
  for (const { step, to } of transitions) if (to === 'in_progress') step.head = head;
  const completed = transitions.filter((t) => t.to === 'completed').map((t) => t.step);
  const bases = completed.map((step) => step.head ?? work.repoHead);
  if (bases.some((base) => base && base !== head)) {
    const remote = await quietly(deps, 'branch and remote', () => evidence.remote(cwd));
    const since = new Map<string, Awaited<ReturnType<typeof evidence.commitsSince>>>();
    for (const [index, step] of completed.entries()) {
      const base = bases[index];
      if (!base || base === head) continue;
      if (!since.has(base)) since.set(base, await quietly(deps, 'commits', () => evidence.commitsSince(cwd, base)));
      const found = since.get(base);
      if (!found || found.commits.length === 0) continue;
      step.evidence = {
        commits: found.commits,
        moreCommits: found.more,
        ...(remote?.branch ? { branch: remote.branch } : {}),
        ...(remote?.web ? { web: remote.web } : {}),
      };
    }
  }
  work.repoHead = head;
}
