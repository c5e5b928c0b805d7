// A DidaGateway bound to one abort signal: every call carries it, and no call starts once it is aborted.
import type { CallOptions, DidaGateway } from './dida-gateway';

/** Thrown by a call refused because its signal was already aborted (the abort reason is the cause). */
export class CallAbortedError extends Error {
  override readonly name = 'AbortError';
  constructor(what: string, reason: unknown) {
    super(`${what} was not sent: the turn was stopped.`, { cause: reason });
  }
}

function merged(signal: AbortSignal, options?: CallOptions): CallOptions {
  return { ...options, signal: options?.signal ? AbortSignal.any([signal, options.signal]) : signal };
}

/**
 * Wraps `gateway` so every call is sent with `signal` (merged with the caller's own), which also ends the gateway's
 * retry waits, and so a call made after the abort throws `CallAbortedError` without reaching Dida: once a person
 * stops the turn, nothing more is written. `close()` does nothing: the wrapped gateway belongs to its creator; `base`
 * names it, so facts learned about the service (it needs titles on updates) outlive one turn's wrapper.
 */
export function abortableGateway(gateway: DidaGateway, signal: AbortSignal): DidaGateway {
  const guard = <T>(what: string, call: (options: CallOptions) => Promise<T>, options?: CallOptions): Promise<T> => {
    if (signal.aborted) return Promise.reject(new CallAbortedError(what, signal.reason));
    return call(merged(signal, options));
  };
  const wrapped: DidaGateway & { readonly base: DidaGateway } = {
    base: (gateway as { base?: DidaGateway }).base ?? gateway,
    kind: gateway.kind,
    listProjects: (o) => guard('Reading the lists', (m) => gateway.listProjects(m), o),
    getProject: (id, o) => guard('Reading a list', (m) => gateway.getProject(id, m), o),
    createProject: (input, o) => guard('Creating a list', (m) => gateway.createProject(input, m), o),
    getProjectData: (id, o) => guard('Reading a list', (m) => gateway.getProjectData(id, m), o),
    getTask: (pid, tid, o) => guard('Reading a task', (m) => gateway.getTask(pid, tid, m), o),
    createTask: (input, o) => guard('Creating a task', (m) => gateway.createTask(input, m), o),
    updateTask: (task, o) => guard('Updating a task', (m) => gateway.updateTask(task, m), o),
    completeTask: (pid, tid, o) => guard('Completing a task', (m) => gateway.completeTask(pid, tid, m), o),
    deleteTask: (pid, tid, o) => guard('Deleting a task', (m) => gateway.deleteTask(pid, tid, m), o),
    deleteProject: (pid, o) => guard('Deleting a list', (m) => gateway.deleteProject(pid, m), o),
    listComments: (pid, tid, o) => guard('Reading comments', (m) => gateway.listComments(pid, tid, m), o),
    addComment: (pid, tid, text, o) => guard('Adding a comment', (m) => gateway.addComment(pid, tid, text, m), o),
    getPreference: (o) => guard('Reading the preferences', (m) => gateway.getPreference(m), o),
    listMembers: (pid, o) => guard('Reading the members', (m) => gateway.listMembers(pid, m), o),
    close: () => Promise.resolve(),
  };
  const { deleteComment, readRawComments } = gateway;
  if (deleteComment) wrapped.deleteComment = (pid, tid, cid, o) => guard('Deleting a comment', (m) => deleteComment.call(gateway, pid, tid, cid, m), o);
  if (readRawComments) wrapped.readRawComments = (pid, tid, page, o) => guard('Reading comments', (m) => readRawComments.call(gateway, pid, tid, page, m), o);
  return wrapped;
}

/** The gateway a wrapper stands for (itself when it is not a wrapper): what per-gateway facts are learned about. */
export function baseGateway(gateway: DidaGateway): DidaGateway {
  return (gateway as { base?: DidaGateway }).base ?? gateway;
}
