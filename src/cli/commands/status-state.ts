// What `dida-todo status` knows of state.json, read without the store (which would move a damaged file aside): the
// Works it holds, or the problem that keeps it from being read, and the damaged copies left beside it.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { CliText } from '../cli-locale';
import { safeText } from '../terminal-text';
import { describeIssues } from '../../common/schema-issues';
import { ENGINE_STATE_VERSION, type EngineState } from '../../core/work/work-state';
import { readFileIfExists } from '../../store/atomic-file';
import { engineStateStore } from '../../wiring/runtime';

export interface StateInfo {
  file: string;
  exists: boolean;
  works: number;
  state: EngineState | undefined;
  problem?: string;
  leftovers: string[];
}

/** Reads state.json without the store (which would move a damaged file aside): status must not change files. */
export async function inspectState(file: string, dir: string, text: CliText): Promise<StateInfo> {
  const { t } = text;
  const base = path.basename(file);
  const leftovers = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(`${base}.corrupt-`)).map((n) => path.join(dir, n));
  const info: StateInfo = { file, exists: false, works: 0, state: undefined, leftovers };
  let content: string | undefined;
  try {
    content = await readFileIfExists(file);
  } catch (error) {
    info.problem = t('cli.status.stateUnreadable', { file, reason: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    return info;
  }
  if (content === undefined) return info;
  info.exists = true;
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    info.problem = t('cli.status.stateNotJson', { file });
    return info;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    info.problem = t('cli.status.stateNotObject', { file });
    return info;
  }
  const { version, ...data } = raw as Record<string, unknown>;
  if (typeof version === 'number' && version > ENGINE_STATE_VERSION) {
    info.problem = t('cli.status.stateNewer', { file, version, known: ENGINE_STATE_VERSION });
    return info;
  }
  if (typeof version !== 'number') {
    info.problem = t('cli.status.stateNoVersion', { file });
    return info;
  }
  // The snapshot plus its change log, read without changing either (a damaged state is reported, not moved aside).
  const peeked = await engineStateStore({ stateFile: file, lockDir: path.join(dir, 'locks') }).peek();
  if (peeked.problem !== undefined || !peeked.value) {
    info.problem = t('cli.status.stateSchema', { file, detail: safeText(peeked.problem ?? describeIssues([], 2)) });
    return info;
  }
  info.state = peeked.value;
  info.works = Object.keys(peeked.value.works).length;
  void data;
  return info;
}
