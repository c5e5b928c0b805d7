// Every human-visible and model-visible string, per locale (zh default), with `{name}` placeholders.
import en from '../../../locale/en.json';
import zh from '../../../locale/zh.json';

export type LocaleId = 'zh' | 'en';
export type MessageKey = keyof typeof zh;
export type MessageVars = Record<string, string | number>;

const CATALOGS: Record<LocaleId, Record<MessageKey, string>> = { zh, en };

export interface Locale {
  readonly id: LocaleId;
  /** The message for `key` with `{name}` placeholders filled; a missing variable stays visible as `{name}`. */
  t(key: MessageKey, vars?: MessageVars): string;
}

/** `template` with its `{name}` placeholders filled from `vars`; a missing variable stays visible as `{name}`. */
export function fillTemplate(template: string, vars?: Record<string, string | number>): string {
  return vars ? template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole)) : template;
}

/** Keys present in one of two catalogs but not the other (for the parity tests). */
export function keyDifferences(zh: object, en: object): { missingInEn: string[]; missingInZh: string[] } {
  const zhKeys = Object.keys(zh);
  const enKeys = Object.keys(en);
  return { missingInEn: zhKeys.filter((k) => !enKeys.includes(k)), missingInZh: enKeys.filter((k) => !zhKeys.includes(k)) };
}

export function getLocale(id: LocaleId = 'zh'): Locale {
  const catalog = CATALOGS[id] ?? CATALOGS.zh;
  return {
    id,
    t(key, vars) {
      return fillTemplate(catalog[key] ?? CATALOGS.zh[key] ?? key, vars);
    },
  };
}

/** Keys present in one catalog but not the other (for the parity test). */
export function catalogDifferences(): { missingInEn: string[]; missingInZh: string[] } {
  return keyDifferences(CATALOGS.zh, CATALOGS.en);
}
