/**
 * The dashboard's languages: English and Arabic (right-to-left). A person's language is the
 * `cashout_lang` cookie set by the language switch, else the first of English or Arabic in the
 * browser's Accept-Language, else English. All wording comes from `en.ts` and `ar.ts`.
 */
import { AR } from './ar.js';
import { EN, type MessageKey } from './en.js';

export type { MessageKey } from './en.js';

/** The languages the dashboard speaks. */
export const LANGUAGES = ['en', 'ar'] as const;
export type Language = (typeof LANGUAGES)[number];

/** Name of the cookie that keeps a person's choice of language. */
export const LANG_COOKIE = 'cashout_lang';

/** Every table, by language. */
export const TABLES: Readonly<Record<Language, Readonly<Record<MessageKey, string>>>> = { en: EN, ar: AR };

/** True for a language the dashboard speaks. */
export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/**
 * The language of a request: the cookie when it names one, else the Accept-Language entry with
 * the highest weight among `en*` and `ar*` (RFC 9110 §12.5.4), else English.
 */
export function chooseLanguage(cookie: string | undefined, acceptLanguage: string | undefined): Language {
  if (isLanguage(cookie)) return cookie;
  let best: Language = 'en';
  let bestQ = -1;
  for (const part of (acceptLanguage ?? '').split(',')) {
    const [tag, ...params] = part.trim().toLowerCase().split(';');
    const primary = tag?.split('-')[0];
    if (!isLanguage(primary)) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (Number.isFinite(q) && q > bestQ) {
      best = primary;
      bestQ = q;
    }
  }
  return best;
}

/** Text direction of a language. */
export function directionOf(lang: Language): 'rtl' | 'ltr' {
  return lang === 'ar' ? 'rtl' : 'ltr';
}

/** A translator: the entry of `key` with each `{name}` replaced by `params[name]`. */
export type Translate = (key: MessageKey, params?: Readonly<Record<string, string | number>>) => string;

/** The translator of a language. */
export function translator(lang: Language): Translate {
  const table = TABLES[lang];
  return (key, params = {}) =>
    table[key].replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}
