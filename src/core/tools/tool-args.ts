// Validation of tool arguments against their parameter specs, with messages naming the argument.
import type { ParameterSpec, ToolResult } from './tool-types';

function describeType(spec: ParameterSpec): string {
  return spec.enum ? `one of ${spec.enum.map((v) => JSON.stringify(v)).join(', ')}` : spec.type === 'integer' ? 'a whole number' : `a ${spec.type}`;
}

function check(value: unknown, spec: ParameterSpec, path: string, problems: string[]): void {
  if (value === undefined || value === null) {
    if (spec.required) problems.push(`${path} is required (${describeType(spec)})`);
    return;
  }
  switch (spec.type) {
    case 'string':
      if (typeof value !== 'string') problems.push(`${path} must be ${describeType(spec)}`);
      else if (spec.enum && !spec.enum.includes(value)) problems.push(`${path} must be ${describeType(spec)}, got ${JSON.stringify(value).slice(0, 40)}`);
      return;
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || !Number.isFinite(value) || (spec.type === 'integer' && !Number.isInteger(value))) problems.push(`${path} must be ${describeType(spec)}`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${path} must be true or false`);
      return;
    case 'array':
      if (!Array.isArray(value)) {
        problems.push(`${path} must be an array`);
        return;
      }
      if (value.length > 200) problems.push(`${path} has ${value.length} entries; at most 200 are allowed`);
      if (spec.items) value.slice(0, 200).forEach((v, i) => check(v, spec.items as ParameterSpec, `${path}[${i}]`, problems));
      return;
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) {
        problems.push(`${path} must be an object`);
        return;
      }
      const props = spec.properties ?? {};
      for (const [key, child] of Object.entries(props)) check((value as Record<string, unknown>)[key], child, `${path}.${key}`, problems);
      if (spec.additionalProperties === false) {
        for (const key of Object.keys(value)) if (!(key in props)) problems.push(`${path}.${key} is not a known field`);
      }
      return;
    }
  }
}

/** Checks `args` against the top-level parameter specs; unknown top-level keys are errors too. */
export function validateArgs(args: Record<string, unknown>, params: Record<string, ParameterSpec>, tool: string): ToolResult | undefined {
  const problems: string[] = [];
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { code: 'invalid_argument', message: `${tool} takes an object of arguments.` };
  }
  for (const [key, spec] of Object.entries(params)) check(args[key], spec, key, problems);
  const unknown = Object.keys(args).filter((key) => !(key in params));
  for (const key of unknown) problems.push(`${key} is not an argument of ${tool}`);
  if (problems.length === 0) return undefined;
  // A wrong name is answered with the right ones (`name` for `list_name`, say).
  const known = unknown.length > 0 ? ` (its arguments are ${Object.keys(params).join(', ')})` : '';
  return { code: 'invalid_argument', message: `Invalid arguments for ${tool}: ${problems.slice(0, 4).join('; ')}${known}.` };
}
