// How a gateway recognises, in a successful answer, that the object asked for does not exist (live Dida semantics).
import { DidaError, adviceFor } from './dida-error';
import { isDeletedTask } from './types';

/** A single object read: an empty answer means it does not exist (live Dida answers some missing ids that way). */
export function present<T>(value: T | undefined, route: string, id: string): T {
  if (value === undefined) {
    throw new DidaError({ code: 'not_found', route, status: 200, notFoundSignal: 'empty_answer', message: `Dida sent an empty answer to ${route} for ${id}: ${adviceFor('not_found')}.` });
  }
  return value;
}

/** A task as read or written back: an empty answer or one marked deleted means it is gone (DidaError `not_found`). */
export function liveTask<T extends object>(task: T | undefined, route: string, taskId: string): T {
  const value = present(task, route, taskId);
  if (isDeletedTask(value)) {
    throw new DidaError({ code: 'not_found', route, status: 200, notFoundSignal: 'deleted_flag', message: `Dida answered ${route} with task ${taskId} marked deleted: ${adviceFor('not_found')}.` });
  }
  return value;
}
