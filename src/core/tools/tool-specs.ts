// What the model is told about the three tools (descriptions and parameter schemas): constants only, so the plugin's
// first load can register the tools without loading the engine.
import type { ParameterSpec } from './tool-types';

export const TODO_DESCRIPTION = `Steps of the current Dida Work (one open task in the bound list = one request from the person); use instead of todo_write.
create: add steps; with no current Work, work_title (and priority) starts one. update: status by step id or exact title; completed needs a resolution (what changed, how verified), skipped the reason. list; get; delete (your step); clear (your unfinished steps).`;

export const STEP_STATUS = ['pending', 'in_progress', 'completed', 'skipped'] as const;

export const TODO_PARAMETERS: Record<string, ParameterSpec> = {
  action: { type: 'string', required: true, enum: ['create', 'update', 'list', 'get', 'delete', 'clear'] },
  work_title: { type: 'string', description: 'create: new Work title' },
  priority: { type: 'string', enum: ['low', 'medium', 'high'] },
  steps: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      properties: {
        title: { type: 'string', required: true },
        status: { type: 'string', enum: ['pending', 'in_progress'] },
      },
    },
  },
  updates: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      properties: {
        step: { type: 'string', required: true, description: 'id or exact title' },
        status: { type: 'string', enum: STEP_STATUS },
        resolution: { type: 'string' },
        title: { type: 'string', description: 'rename (your steps)' },
      },
    },
  },
  step: { type: 'string', description: 'get/delete: id or exact title' },
};

export const TODO_WORK_DESCRIPTION = `Works of the bound Dida list.
list: executable Works, by priority. next: take the top one (only after the person's queue phrase or a poll note). switch: make \`work\` current. refresh: re-read Dida. finish_current: send for review now. wait_for_human: you need the person; give the reason, then stop. resume: continue a waiting Work. keep_open: keep=true stops automatic review.`;

export const TODO_WORK_PARAMETERS: Record<string, ParameterSpec> = {
  action: {
    type: 'string',
    required: true,
    enum: ['list', 'switch', 'next', 'refresh', 'finish_current', 'wait_for_human', 'resume', 'keep_open'],
  },
  work: { type: 'string', description: 'switch/resume: Work id' },
  reason: { type: 'string', description: 'wait_for_human: what you need, for the person' },
  keep: { type: 'boolean' },
};

export const SETUP_DESCRIPTION = `Connect this directory to a Dida (滴答清单) list.
status: binding and reachability. bind (only when the person asks): list_name (that open list, else a new one; near misses need create: true) or list_id; tag routes #tag tasks here. unbind. login_check: test the token; if it fails, tell the person to run \`dida-todo login --token -\` in a terminal (it asks for the token unseen; never put it on a command line or in chat).`;

export const SETUP_PARAMETERS: Record<string, ParameterSpec> = {
  action: { type: 'string', required: true, enum: ['status', 'bind', 'unbind', 'login_check'] },
  list_name: { type: 'string', description: 'bind: list name' },
  list_id: { type: 'string', description: 'bind: list id' },
  create: { type: 'boolean' },
  tag: { type: 'string' },
};
