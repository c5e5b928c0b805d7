// The queue phrase: whether a person's whole message asks a turn to take work from the bound list's queue. Imports
// nothing, so the plugin's first-load layer can tell without loading the engine.

/** The trigger phrases that grant a queue scan when none are configured. */
export const DEFAULT_QUEUE_TRIGGERS: readonly string[] = ['检查todo'];

/** Zero-width characters a phone keyboard or a paste may slip into a message. */
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/g;

/** The comparison form of a message or trigger: NFKC (full-width → half-width), lower case, zero-width removed, trimmed. */
export function normaliseTrigger(text: string): string {
  return String(text ?? '')
    .normalize('NFKC')
    .replace(ZERO_WIDTH, '')
    .toLowerCase()
    .trim();
}

/**
 * True only when the whole human message is one of the trigger phrases. Both sides are compared after NFKC
 * normalisation (full-width letters/spaces → half-width), lower-casing, removing zero-width characters and trimming
 * surrounding whitespace: `检查TODO`, ` 检查todo ` and `检查ｔｏｄｏ` grant. Anything else in the message —
 * punctuation, a longer request that contains the phrase (`请检查todo并修复`, `检查todo。然后…`), inner spaces —
 * does not: a queue scan is a deliberate act, so a near miss must stay an ordinary message. Empty triggers never match.
 */
export function detectQueueGrant(message: string, triggers: readonly string[] = DEFAULT_QUEUE_TRIGGERS): boolean {
  const said = normaliseTrigger(message);
  // An empty message matches nothing, so an empty trigger never matches either.
  return said !== '' && triggers.some((trigger) => normaliseTrigger(trigger) === said);
}
