// The three model-facing tools, host-neutral.
import { setupTool } from './setup-tool';
import { todoTool } from './todo-tool';
import { todoWorkTool } from './todo-work-tool';
import type { ToolDefinition } from './tool-types';

export const TOOLS: readonly ToolDefinition[] = [todoTool, todoWorkTool, setupTool];
export { renderResult } from './tool-types';
export type { ToolContext, ToolDefinition, ToolResult, ParameterSpec } from './tool-types';
export { panelItems, renderWork } from './work-view';
