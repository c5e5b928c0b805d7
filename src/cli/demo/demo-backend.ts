// Where the demo's Dida lives: the local simulator (default) or the person's real account (--real --list <name>).
import { cliText, type CliText } from '../cli-locale';
import type { DidaGateway } from '../../dida/dida-gateway';
import { createHttpGateway } from '../../dida/http-gateway';
import type { Task } from '../../dida/types';
import { startSimulator, type Simulator } from '../../sim/simulator';
import { DEMO_DRAFT, DEMO_LIST_NAME, DEMO_WORK } from './demo-script';

export interface SeededList {
  projectId: string;
  name: string;
  work: Task;
  draft: Task;
}

export interface DemoBackend {
  readonly kind: 'simulator' | 'real';
  /** Reads what the person sees (the same Open API the bundle uses). */
  readonly gateway: DidaGateway;
  /** The token the bundle gets as DIDA_TODO_TOKEN. */
  readonly token: string;
  /** Written into config.yaml as `baseUrl` (simulator only). */
  readonly baseUrl?: string;
  /** With --real: the person's dedicated list. */
  readonly listName?: string;
  /** Creates the list the person "wrote": one Work with two items and a body, one draft. */
  seed(): Promise<SeededList>;
  /** The person (the list's owner) comments on a task, as in the Dida app. */
  ownerComment(projectId: string, taskId: string, text: string): Promise<void>;
  close(): Promise<void>;
}

/** A fresh simulator with its own token; closing it stops the server. */
export async function simulatorBackend(existing?: Simulator): Promise<DemoBackend & { sim: Simulator }> {
  const sim = existing ?? (await startSimulator());
  const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, timeoutMs: 5_000 });
  return {
    kind: 'simulator',
    sim,
    gateway,
    token: sim.token,
    baseUrl: sim.baseUrl,
    async seed() {
      const project = sim.seedProject({ name: DEMO_LIST_NAME });
      const work = sim.seedTask({
        projectId: project.id,
        title: DEMO_WORK.title,
        priority: DEMO_WORK.priority,
        content: DEMO_WORK.content,
        items: DEMO_WORK.items.map((title) => ({ title })),
      });
      const draft = sim.seedTask({ projectId: project.id, title: DEMO_DRAFT.title, priority: DEMO_DRAFT.priority });
      return { projectId: project.id, name: project.name, work, draft };
    },
    async ownerComment(projectId, taskId, text) {
      sim.addComment(projectId, taskId, text, { userId: sim.userId });
    },
    async close() {
      await gateway.close();
      if (!existing) await sim.close();
    },
  };
}

/** Thrown when the real list cannot be used; the message is one line saying what to do. */
export class DemoListError extends Error {
  override readonly name = 'DemoListError';
}

/**
 * The person's real Dida (token from DIDA_TODO_TOKEN), confined to one dedicated list: created when missing, refused
 * when several open lists have the name or when it still has open tasks (the demo never touches other lists).
 */
export function realBackend(token: string, listName: string, gatewayOverride?: DidaGateway, text: CliText = cliText('en')): DemoBackend {
  const gateway = gatewayOverride ?? createHttpGateway({ token, timeoutMs: 15_000 });
  return {
    kind: 'real',
    gateway,
    token,
    listName,
    async seed() {
      const lists = (await gateway.listProjects()).filter((p) => p.name === listName && !p.closed);
      if (lists.length > 1) throw new DemoListError(text.t('cli.demo.list.ambiguous', { count: lists.length, list: listName }));
      const project = lists[0] ?? (await gateway.createProject({ name: listName }));
      const open = (await gateway.getProjectData(project.id)).tasks;
      if (open.length > 0) {
        throw new DemoListError(text.t('cli.demo.list.notEmpty', { list: listName, count: open.length }));
      }
      const work = await gateway.createTask({
        projectId: project.id,
        title: DEMO_WORK.title,
        priority: DEMO_WORK.priority,
        content: DEMO_WORK.content,
        items: DEMO_WORK.items.map((title) => ({ title, status: 0 })),
      });
      const draft = await gateway.createTask({ projectId: project.id, title: DEMO_DRAFT.title, priority: DEMO_DRAFT.priority });
      return { projectId: project.id, name: project.name, work, draft };
    },
    async ownerComment(projectId, taskId, text) {
      // The token is the owner's, so this comment is the owner's, as the anchor comment the bundle wrote.
      await gateway.addComment(projectId, taskId, text);
    },
    async close() {
      await gateway.close();
    },
  };
}
