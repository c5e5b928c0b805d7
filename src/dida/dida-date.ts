// Reads and writes Dida date strings (`2019-11-13T03:00:00+0000`, with or without milliseconds).

const OFFSET_NO_COLON = /([+-])(\d{2})(\d{2})$/;

/** Parses any date form Dida sends; returns undefined for absent or unreadable values instead of throwing. */
export function parseDidaDate(value: string | null | undefined): Date | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  let text = value.trim();
  if (OFFSET_NO_COLON.test(text)) text = text.replace(OFFSET_NO_COLON, '$1$2:$3');
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Formats a date the way Dida documents it: UTC with a `+0000` offset and no milliseconds. */
export function formatDidaDate(date: Date | number): string {
  const iso = new Date(date).toISOString();
  return `${iso.slice(0, 19)}+0000`;
}

/** Same as formatDidaDate but with milliseconds, the form newer Dida responses use. */
export function formatDidaDateMillis(date: Date | number): string {
  const iso = new Date(date).toISOString();
  return `${iso.slice(0, 23)}+0000`;
}
