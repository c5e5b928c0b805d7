// When Dida (or the dida CLI) answers a create with an empty body, the created object is found by reading back.
import { parseDidaDate } from './dida-date';
import { DidaError } from './dida-error';
import type { CallOptions, DidaGateway } from './dida-gateway';
import type { Comment, NewProject, NewTask, Project, Task } from './types';

function found<T>(value: T | undefined, route: string): T {
  if (value === undefined) {
    throw new DidaError({ code: 'invalid_response', route, message: `Dida gave an empty answer to ${route} and the created object could not be found by reading back.` });
  }
  return value;
}

/** The list just created: the last one with that name. */
export async function projectCreatedAs(gateway: DidaGateway, input: NewProject, options?: CallOptions): Promise<Project> {
  const same = (await gateway.listProjects(options)).filter((p) => p.name === input.name);
  return found(same.at(-1), 'POST /project');
}

/** The task just created: the newest open task with that title. */
export async function taskCreatedAs(gateway: DidaGateway, input: NewTask, options?: CallOptions): Promise<Task> {
  const matches = (await gateway.getProjectData(input.projectId, options)).tasks.filter((t) => t.title === input.title);
  matches.sort((a, b) => (parseDidaDate(b.createdTime)?.getTime() ?? 0) - (parseDidaDate(a.createdTime)?.getTime() ?? 0));
  return found(matches[0], 'POST /task');
}

/**
 * The comment just added: the newest one with that text. When there is none, the task is read: a deleted task
 * (which live Dida may answer with an empty 200) is DidaError `not_found`.
 */
export async function commentAddedAs(gateway: DidaGateway, projectId: string, taskId: string, text: string, options?: CallOptions): Promise<Comment> {
  const same = (await gateway.listComments(projectId, taskId, options)).filter((c) => c.title === text);
  if (same.length === 0) await gateway.getTask(projectId, taskId, options);
  return found(same.at(-1), 'POST /project/{pid}/task/{tid}/comment');
}
