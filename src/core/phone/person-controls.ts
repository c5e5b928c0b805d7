// What a person does to a session's current Work without the model (the `/dida` commands): pause it, resume it.
import type { EngineDeps } from '../work/engine-context';
import { pauseWork } from './phone-pause';
import { resumeWork } from './waiting';
import type { WorkRecord } from '../work/work-state';

export type PauseOutcome = { status: 'paused'; work: WorkRecord } | { status: 'already_waiting'; work: WorkRecord } | { status: 'no_current_work' };
export type ResumeOutcome = { status: 'resumed'; work: WorkRecord } | { status: 'not_waiting'; work: WorkRecord } | { status: 'no_current_work' };

async function currentOpenWork(deps: EngineDeps, sessionId: string): Promise<{ key: string; work: WorkRecord } | undefined> {
  const state = await deps.state.read();
  const key = state.sessions[sessionId]?.currentWork;
  const work = key ? state.works[key] : undefined;
  return key && work && work.phase === 'open' ? { key, work } : undefined;
}

/**
 * Pauses the session's current Work as a stop from the person: it waits for them with a comment saying where it
 * stopped and its priority set to none, and nothing continues it until they resume it (see pauseForPerson).
 */
export async function pauseCurrentWork(deps: EngineDeps, sessionId: string): Promise<PauseOutcome> {
  const current = await currentOpenWork(deps, sessionId);
  if (!current) return { status: 'no_current_work' };
  if (current.work.waiting) return { status: 'already_waiting', work: current.work };
  const paused = await pauseWork(deps, current.key, { by: 'command' });
  return paused ? { status: 'paused', work: paused } : { status: 'already_waiting', work: current.work };
}

/** Ends the wait of the session's current Work as the person's explicit resume (its priority back, the reminder done). */
export async function resumeCurrentWork(deps: EngineDeps, sessionId: string): Promise<ResumeOutcome> {
  const current = await currentOpenWork(deps, sessionId);
  if (!current) return { status: 'no_current_work' };
  if (!current.work.waiting) return { status: 'not_waiting', work: current.work };
  return { status: 'resumed', work: await resumeWork(deps, current.key, { explicit: true }) };
}
