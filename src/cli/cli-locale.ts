// The language of the `dida-todo` command: its catalogs (locale/cli.zh.json, locale/cli.en.json) and how it is chosen.
import en from '../../locale/cli.en.json';
import zh from '../../locale/cli.zh.json';
import { fillTemplate, keyDifferences } from '../core/text/locale';

export type CliLocaleId = 'zh' | 'en';
export type CliKey = keyof typeof en;
export type CliVars = Record<string, string | number>;

const CATALOGS: Record<CliLocaleId, Record<CliKey, string>> = { zh, en };

/** The messages of one language. */
export interface CliText {
  readonly id: CliLocaleId;
  /** The message for `key` with `{name}` placeholders filled; a missing variable stays visible as `{name}`. */
  t(key: CliKey, vars?: CliVars): string;
  /** "1 list" / "2 lists": picks `key.one` or `key.other` by `count` (Chinese has no plural, both are the same). */
  plural(key: PluralKey, count: number, vars?: CliVars): string;
}

type PluralKey = CliKey extends infer K ? (K extends `${infer Base}.one` ? Base : never) : never;

export function cliText(id: CliLocaleId): CliText {
  const catalog = CATALOGS[id];
  const t = (key: CliKey, vars?: CliVars): string => {
    return fillTemplate(catalog[key] ?? CATALOGS.en[key] ?? key, vars);
  };
  return {
    id,
    t,
    plural: (key, count, vars) => t(`${key}.${count === 1 ? 'one' : 'other'}` as CliKey, { count, ...vars }),
  };
}

/**
 * The CLI's language: the `locale` of config.yaml when set, else the first non-empty of LC_ALL, LC_MESSAGES and
 * LANG (`zh…` → Chinese, anything else → English), else English.
 */
export function pickCliLocale(configLocale: string | undefined, env: NodeJS.ProcessEnv): CliLocaleId {
  if (configLocale === 'zh' || configLocale === 'en') return configLocale;
  for (const name of ['LC_ALL', 'LC_MESSAGES', 'LANG'] as const) {
    const value = (env[name] ?? '').trim();
    if (value === '') continue;
    return /^zh/i.test(value) ? 'zh' : 'en';
  }
  return 'en';
}

/** Keys present in one CLI catalog but not the other (for the parity test). */
export function cliCatalogDifferences(): { missingInEn: string[]; missingInZh: string[] } {
  return keyDifferences(CATALOGS.zh, CATALOGS.en);
}
