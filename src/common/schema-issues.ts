// Turns schema validation issues into one readable sentence naming each path.
import type * as z from 'zod/mini';

type Issue = z.core.$ZodIssue;

/** Formats issues as `at <path>: <problem>` parts joined by `; ` (at most `limit` of them). */
export function describeIssues(issues: readonly Issue[], limit = 5): string {
  const parts = issues.slice(0, limit).map((issue) => `at ${formatPath(issue.path)}: ${describeIssue(issue)}`);
  if (issues.length > limit) parts.push(`and ${issues.length - limit} more`);
  return parts.join('; ');
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join('');
}

function describeIssue(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (!('input' in issue)) return `expected ${issue.expected}`;
      return `expected ${issue.expected}${issue.input === undefined ? ', but it is missing' : `, got ${kindOf(issue.input)}`}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}${issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' entries' : ''}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' entries' : ''}`;
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_union':
      return 'does not match any allowed shape';
    default:
      return issue.message && issue.message !== 'Invalid input' ? issue.message : `invalid (${issue.code})`;
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  // YAML's .inf and .nan are numbers, yet no setting takes them: say which one it was.
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? 'NaN (not a number)' : String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
