// The two places where dsh asks the person — its question service (`ctx.userQuestions.ask`, used by ask_user_question
// and the plan review) and the `approval/request` waterfall — taken at the plugin's first load and handed to the
// host's desk asks (desk-asks.ts, loaded at the first request). Sessions the host does not serve pass straight through.
import { processAlive } from '../common/process-alive';
import type { AdapterDeps } from './adapter-deps';
import { messageOf } from '../runtime/session/runtime-deps';
import type { DeskAskOptions, DeskAsks } from '../runtime/phone/desk-asks';
import type { HostContext, UserQuestionsService } from './ports';
import type { ApprovalOutcome, ApprovalRequest, QuestionAnswer, QuestionRequest } from '../runtime/session/session-ports';

export interface DeskHandlers {
  question(request: QuestionRequest, original: (request: QuestionRequest) => Promise<QuestionAnswer>): Promise<QuestionAnswer>;
  approval(request: ApprovalRequest, next: () => Promise<ApprovalOutcome>): Promise<ApprovalOutcome>;
}

/**
 * Registers both seams on `ctx`; `handlers()` gives the host's handlers once it is loaded (undefined: pass through).
 * The approval listener goes first in the waterfall (dsh web's answerer is asked through it, so the first answer can
 * win); the question service's `ask` is wrapped on the service itself (rc.8 has one provider and no racing seam) and
 * put back when the plugin or the service goes away. Never throws: a seam this dsh lacks is told (`lack`, else the log)
 * and left out.
 */
export function registerDeskSeams(
  ctx: HostContext,
  handlers: () => Promise<DeskHandlers | undefined>,
  log: (line: string) => void,
  lack: (seam: 'approval' | 'userQuestions', detail: string) => void = (seam, detail) => log(`${seam === 'approval' ? 'approvals' : "dsh's questions"} cannot reach Dida in this dsh: ${detail}`),
): void {
  try {
    ctx.on(
      'approval/request',
      async (request: ApprovalRequest, next: () => Promise<ApprovalOutcome>) => {
        const host = await handlers().catch(() => undefined);
        return host ? host.approval(request, next) : next();
      },
      true,
    );
  } catch (error) {
    lack('approval', messageOf(error));
  }
  try {
    ctx.inject?.(['userQuestions'], (scope) => wrapAsk(scope, handlers, (detail) => lack('userQuestions', detail)));
  } catch (error) {
    lack('userQuestions', messageOf(error));
  }
}

function wrapAsk(scope: HostContext, handlers: () => Promise<DeskHandlers | undefined>, lack: (detail: string) => void): void {
  const service = scope.get('userQuestions') as UserQuestionsService | undefined;
  if (!service) return;
  if (typeof service.ask !== 'function') {
    lack('the question service has no ask of the shape this bundle knows');
    return;
  }
  const own = Object.getOwnPropertyDescriptor(service, 'ask');
  const original = service.ask;
  const call = (request: QuestionRequest) => original.call(service, request);
  const wrapped = async (request: QuestionRequest): Promise<QuestionAnswer> => {
    const host = await handlers().catch(() => undefined);
    return host ? host.question(request, call) : call(request);
  };
  try {
    service.ask = wrapped;
  } catch (error) {
    lack(messageOf(error));
    return;
  }
  scope.effect(() => () => {
    if (service.ask !== wrapped) return;
    if (own) Object.defineProperty(service, 'ask', own);
    else delete (service as { ask?: unknown }).ask;
  });
}

/** The host's desk asks, loaded at the first request (or at start when requests of a gone process are in the state). */
export class DeskAskLoader implements DeskHandlers {
  private loaded: Promise<DeskAsks> | undefined;

  constructor(
    private readonly deps: AdapterDeps,
    private readonly options: () => Omit<DeskAskOptions, 'pid' | 'isAlive'> & { pid?: number; isAlive?: (pid: number) => boolean },
  ) {}

  private load(): Promise<DeskAsks> {
    this.loaded ??= import('../runtime/phone/desk-asks').then(({ DeskAsks }) => {
      const options = this.options();
      return new DeskAsks(this.deps, { ...options, pid: options.pid ?? process.pid, isAlive: options.isAlive ?? processAlive });
    });
    return this.loaded;
  }

  async question(request: QuestionRequest, original: (request: QuestionRequest) => Promise<QuestionAnswer>): Promise<QuestionAnswer> {
    return (await this.load()).question(request, original);
  }

  async approval(request: ApprovalRequest, next: () => Promise<ApprovalOutcome>): Promise<ApprovalOutcome> {
    return (await this.load()).approval(request, next);
  }

  /** At start: requests this machine filed for a process that is gone are withdrawn in Dida (a cheap look first). */
  async sweepAtStart(): Promise<void> {
    const state = await this.deps.state.read();
    if (!Object.values(state.works).some((w) => (w.asks?.length ?? 0) > 0)) return;
    await (await this.load()).sweep();
  }

  /** A session went away: its requests end. */
  released(sessionId: string): void {
    void this.loaded?.then((asks) => asks.released(sessionId));
  }

  /** Resolves once every request in flight has told Dida how it ended (the plugin is unloading). */
  async settled(): Promise<void> {
    await (await this.loaded)?.settled();
  }
}
