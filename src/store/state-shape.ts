// The held form of a logged state and its changes: a copy-on-access view an update may mutate, and the log lines that
// say what it changed (validated entry by entry and section by section against the state's schemas).
import type * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { displayPath } from './paths';
import { StateError } from './state-store';

export type Json = Record<string, unknown>;

export interface FileId {
  ino: number;
  size: number;
  mtimeMs: number;
}

export /** The state as last read or written by this process, with each entry's serialized form (to tell what changed). */
interface Loaded {
  sections: Map<string, unknown>;
  sectionJson: Map<string, string>;
  collections: Map<string, Map<string, unknown>>;
  entryJson: Map<string, Map<string, string>>;
  snapshot: FileId | undefined;
  logIno: number | undefined;
  /** Bytes of the log folded in (up to the last complete line). */
  logOffset: number;
  gen: number;
  /**
   * Sections and collections this version does not know (a later dida-todo wrote them): never shown to an update, kept
   * as they are, and written back into each new snapshot — so a mix of versions on one machine loses nothing.
   */
  foreign: Map<string, unknown>;
}

/** What a state's shape is checked against (the store's options). */
export interface StateSchemas<T> {
  file: string;
  schema: z.ZodMiniType<T>;
  collections: Record<string, z.ZodMiniType>;
  sections: Record<string, z.ZodMiniType>;
}

/** Views of a held state and the log lines of what changed in them. */
export class StateShape<T extends object> {
  constructor(private readonly options: StateSchemas<T>) {}

  /** A copy-on-access view: sections are copied, collection entries are copied when first touched. */
  view(loaded: Loaded): View<T> {
    const value: Json = {};
    const tracked = new Map<string, Tracked>();
    for (const [name, section] of loaded.sections) value[name] = structuredClone(section);
    for (const [name, entries] of loaded.collections) {
      const t: Tracked = { accessed: new Map(), written: new Map(), deleted: new Set() };
      tracked.set(name, t);
      value[name] = lazyRecord(entries, t);
    }
    return { value: value as unknown as T, tracked };
  }

  /** The log lines for what `fn` changed in a view. */
  changesOf(view: View<T>, loaded: Loaded): Line[] {
    const lines: Line[] = [];
    const value = view.value as Json;
    for (const [name, json] of loaded.sectionJson) {
      const now = value[name];
      const parsed = this.checkSection(name, now);
      const text = JSON.stringify(parsed);
      if (text !== json) lines.push({ kind: 'section', name, value: parsed, text: JSON.stringify({ s: name, v: parsed }) });
    }
    for (const name of Object.keys(this.options.sections)) {
      if (loaded.sectionJson.has(name) || value[name] === undefined) continue;
      const parsed = this.checkSection(name, value[name]);
      lines.push({ kind: 'section', name, value: parsed, text: JSON.stringify({ s: name, v: parsed }) });
    }
    for (const [name, t] of view.tracked) {
      const known = loaded.entryJson.get(name) as Map<string, string>;
      const candidates = new Map<string, unknown>([...t.accessed, ...t.written]);
      for (const [key, entry] of candidates) {
        if (t.deleted.has(key)) continue;
        const parsed = this.checkEntry(name, key, entry);
        const text = JSON.stringify(parsed);
        if (text !== known.get(key)) lines.push({ kind: 'entry', name, key, value: parsed, text: JSON.stringify({ c: name, k: key, v: parsed }) });
      }
      for (const key of t.deleted) if (known.has(key)) lines.push({ kind: 'delete', name, key, text: JSON.stringify({ c: name, k: key, d: 1 }) });
    }
    return lines;
  }

  /** The log lines that turn the held state into `next` (a whole new value returned by `fn`). */
  replacementOf(next: Json, loaded: Loaded): Line[] {
    const checked = this.options.schema.safeParse(next, { reportInput: true });
    if (!checked.success) throw this.invalid(describeIssues(checked.error.issues));
    const data = checked.data as Json;
    const lines: Line[] = [];
    for (const name of Object.keys(this.options.sections)) {
      const text = JSON.stringify(data[name]);
      if (text !== loaded.sectionJson.get(name)) lines.push({ kind: 'section', name, value: data[name], text: JSON.stringify({ s: name, v: data[name] }) });
    }
    for (const name of Object.keys(this.options.collections)) {
      const entries = (data[name] ?? {}) as Json;
      const known = loaded.entryJson.get(name) as Map<string, string>;
      for (const [key, entry] of Object.entries(entries)) {
        const text = JSON.stringify(entry);
        if (text !== known.get(key)) lines.push({ kind: 'entry', name, key, value: entry, text: JSON.stringify({ c: name, k: key, v: entry }) });
      }
      for (const key of known.keys()) if (!(key in entries)) lines.push({ kind: 'delete', name, key, text: JSON.stringify({ c: name, k: key, d: 1 }) });
    }
    return lines;
  }

  private checkSection(name: string, value: unknown): unknown {
    const schema = this.options.sections[name];
    if (!schema) throw this.invalid(`at ${name}: not part of the state`);
    const parsed = schema.safeParse(value, { reportInput: true });
    if (!parsed.success) throw this.invalid(`at ${name}: ${describeIssues(parsed.error.issues)}`);
    return parsed.data;
  }

  private checkEntry(name: string, key: string, value: unknown): unknown {
    const parsed = (this.options.collections[name] as z.ZodMiniType).safeParse(value, { reportInput: true });
    if (!parsed.success) throw this.invalid(`at ${name}.${key}: ${describeIssues(parsed.error.issues)}`);
    return parsed.data;
  }

  invalid(problem: string): StateError {
    return new StateError(
      'state_invalid_update',
      this.options.file,
      `Refusing to write ${displayPath(this.options.file)}: the new state is invalid ${problem}. This is a dida-todo bug; the file was left unchanged.`,
    );
  }

  apply(loaded: Loaded, lines: readonly Line[]): void {
    for (const line of lines) {
      if (line.kind === 'section') {
        loaded.sections.set(line.name, line.value);
        loaded.sectionJson.set(line.name, JSON.stringify(line.value));
      } else if (line.kind === 'entry') {
        loaded.collections.get(line.name)?.set(line.key, line.value);
        loaded.entryJson.get(line.name)?.set(line.key, JSON.stringify(line.value));
      } else {
        loaded.collections.get(line.name)?.delete(line.key);
        loaded.entryJson.get(line.name)?.delete(line.key);
      }
    }
  }
}

export interface Tracked {
  accessed: Map<string, unknown>;
  written: Map<string, unknown>;
  deleted: Set<string>;
}

export interface View<T> {
  value: T;
  tracked: Map<string, Tracked>;
}

export type Line =
  | { kind: 'section'; name: string; value: unknown; text: string }
  | { kind: 'entry'; name: string; key: string; value: unknown; text: string }
  | { kind: 'delete'; name: string; key: string; text: string };

/** A record over `entries` that copies an entry the first time it is read and records writes and deletions. */
function lazyRecord(entries: Map<string, unknown>, t: Tracked): Record<string, unknown> {
  const present = (key: string) => !t.deleted.has(key) && (t.written.has(key) || entries.has(key));
  const get = (key: string): unknown => {
    if (t.deleted.has(key)) return undefined;
    if (t.written.has(key)) return t.written.get(key);
    if (t.accessed.has(key)) return t.accessed.get(key);
    if (!entries.has(key)) return undefined;
    const copy = structuredClone(entries.get(key));
    t.accessed.set(key, copy);
    return copy;
  };
  return new Proxy({} as Record<string, unknown>, {
    get: (_target, key) => (typeof key === 'string' ? get(key) : undefined),
    set: (_target, key, value) => {
      if (typeof key !== 'string') return false;
      t.deleted.delete(key);
      t.written.set(key, value);
      return true;
    },
    deleteProperty: (_target, key) => {
      if (typeof key !== 'string') return true;
      t.written.delete(key);
      t.accessed.delete(key);
      t.deleted.add(key);
      return true;
    },
    has: (_target, key) => typeof key === 'string' && present(key),
    ownKeys: () => [...new Set([...entries.keys(), ...t.written.keys()])].filter((k) => !t.deleted.has(k)),
    getOwnPropertyDescriptor: (_target, key) => (typeof key === 'string' && present(key) ? { value: get(key), writable: true, enumerable: true, configurable: true } : undefined),
  });
}
