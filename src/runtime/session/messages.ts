// The bundle's own messages to a session: their source kind (and the fallback when a host refuses it), who wrote a
// message, and whether the bundle can wake an idle session.
import type { HostAgent, UserMessageLike } from './session-ports';

/**
 * The source kind this bundle's own messages carry (its `MessageSourceMap` entry, as dsh's own packages declare theirs:
 * `skill-catalog`, `agent-instructions`, `goal`). dsh 0.1.0-rc.8 accepts any non-empty kind; dsh from 0.1.7 is reported
 * to refuse the shared `plugin` kind and to migrate old `plugin` rows to `plugin:<name>` (decision 0121).
 */
export const OWN_SOURCE_KIND = 'dida-todo';
/** The shared kind older plugins use, with `plugin: 'dida-todo'` (kept for a dsh that refuses the bundle's own kind). */
export const SHARED_SOURCE_KIND = 'plugin';
/** The kind a newer dsh gives a migrated `{kind:'plugin', plugin:'dida-todo'}` row. */
export const MIGRATED_SOURCE_KIND = `plugin:${OWN_SOURCE_KIND}`;

/** Which kind this process sends: its own until the running dsh refuses it (see `sendOwnMessage`). */
const sourceChoice = { kind: OWN_SOURCE_KIND as string, listeners: [] as Array<() => void> };

/** The kind this process's messages carry now. */
export function ownSourceKind(): string {
  return sourceChoice.kind;
}

/** Calls `listener` once when the running dsh refuses the bundle's own kind (the seam report says so). */
export function onOwnKindRefused(listener: () => void): () => void {
  sourceChoice.listeners.push(listener);
  return () => void sourceChoice.listeners.splice(sourceChoice.listeners.indexOf(listener) >>> 0, 1);
}

/** Back to the bundle's own kind (a new dsh process; tests). */
export function resetOwnSourceKind(): void {
  sourceChoice.kind = OWN_SOURCE_KIND;
}

/** Whether a message source is this bundle's, in every shape it has had: its own kind, the shared kind, the migrated kind. */
export function isOwnSource(source: { kind?: unknown; plugin?: unknown } | null | undefined): boolean {
  const kind = source?.kind;
  return kind === OWN_SOURCE_KIND || kind === MIGRATED_SOURCE_KIND || (kind === SHARED_SOURCE_KIND && source?.plugin === OWN_SOURCE_KIND);
}

/** Whether a message source is a person's (dsh's `user` kind). */
export function isPersonSource(source: { kind?: unknown } | null | undefined): boolean {
  return source?.kind === 'user';
}

/** A user message as dsh's `createUserMessage` builds it, sent by this plugin (with the kind this process sends). */
export function pluginMessage(text: string, id: string, form: 'notice' | 'instructions' = 'notice'): UserMessageLike {
  return Object.freeze({
    id,
    role: 'user' as const,
    content: Object.freeze([Object.freeze({ type: 'text' as const, text })]),
    source: Object.freeze({ kind: sourceChoice.kind, plugin: OWN_SOURCE_KIND, form }),
  });
}

/** Whether an error says dsh refused a message for its source (its kind); anything else is no answer about the kind. */
function refusesSource(error: unknown): boolean {
  return /\bsource\b|\bkind\b/i.test(error instanceof Error ? error.message : String(error));
}

/**
 * Sends this bundle's message `text` with `send` (`agent.followup`, `agent.inject`, a session append) and returns it.
 * When the running dsh refuses the bundle's own kind (a synchronous error naming the source or its kind), the message
 * is sent once more with the shared `plugin` kind and the process keeps that kind; any other error is thrown.
 */
export function sendOwnMessage(send: (message: UserMessageLike) => unknown, text: string, id: string, form?: 'notice' | 'instructions'): UserMessageLike {
  const message = pluginMessage(text, id, form);
  try {
    send(message);
    return message;
  } catch (error) {
    if (sourceChoice.kind !== OWN_SOURCE_KIND || !refusesSource(error)) throw error;
    sourceChoice.kind = SHARED_SOURCE_KIND;
    for (const listener of [...sourceChoice.listeners]) listener();
  }
  const shared = pluginMessage(text, id, form);
  send(shared);
  return shared;
}

/** The text blocks of a message, joined. */
export function textOf(message: { content?: ReadonlyArray<{ type: string; text?: string }> } | undefined): string {
  return (message?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('');
}

/** Whether this dsh lets the bundle wake the idle agent with a follow-up (`agent.followup`). */
export function canWake(agent: HostAgent): boolean {
  return typeof agent.followup === 'function';
}

/** True when a person's message is waiting in the agent's inbox (it will start or steer the next step). */
export function personIsWaiting(agent: HostAgent): boolean {
  const pending = [...(agent.inbox?.nextTurn ?? []), ...(agent.inbox?.nextStep ?? [])];
  return pending.some((m) => isPersonSource(m?.source));
}
