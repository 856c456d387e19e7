/** The dashboard's wording tables and language choice. */
import { describe, expect, it } from 'vitest';
import { EN } from '../../src/dashboard/i18n/en.js';
import { AR } from '../../src/dashboard/i18n/ar.js';
import { chooseLanguage, directionOf, translator } from '../../src/dashboard/i18n/index.js';
import { timeFormatter } from '../../src/dashboard/format-time.js';
import { BATCH_STATES, REQUEST_STATES } from '../../src/ledger/lifecycle.js';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('wording tables', () => {
  it('English and Arabic have the same keys, each with the same placeholders and a text', () => {
    expect(Object.keys(AR).sort()).toEqual(Object.keys(EN).sort());
    for (const [key, text] of Object.entries(EN)) {
      const ar = AR[key as keyof typeof EN];
      expect(ar.trim(), key).not.toBe('');
      expect(placeholders(ar), key).toEqual(placeholders(text));
    }
  });

  it('names every batch state and request state in words', () => {
    for (const s of [...BATCH_STATES, 'submitting']) expect(EN, s).toHaveProperty(`state.${s}`);
    for (const s of [...REQUEST_STATES, 'invalid', 'duplicate']) expect(EN, s).toHaveProperty(`status.${s}`);
  });

  it('fills placeholders', () => {
    const text = translator('en')('batch.approved', { user: 'mona', n: 3 });
    expect(text).toBe('Batch approved by mona: 3 withdrawal requests queued.');
    expect(translator('ar')('batch.page', { page: 1, pages: 2 })).toBe('صفحة 1 من 2');
  });
});

describe('language choice', () => {
  it('takes the cookie first, then the best of English and Arabic in Accept-Language, else English', () => {
    expect(chooseLanguage('ar', 'en-GB')).toBe('ar');
    expect(chooseLanguage(undefined, 'ar-EG,ar;q=0.9,en;q=0.8')).toBe('ar');
    expect(chooseLanguage(undefined, 'fr-FR, en;q=0.5, ar;q=0.7')).toBe('ar');
    expect(chooseLanguage(undefined, 'de-DE')).toBe('en');
    expect(chooseLanguage('xx', undefined)).toBe('en');
    expect(directionOf('ar')).toBe('rtl');
    expect(directionOf('en')).toBe('ltr');
  });
});

describe('times', () => {
  it('are shown in the configured time zone', () => {
    expect(timeFormatter('Africa/Cairo', 'en')('2026-11-20T10:00:00Z')).toBe('20 Nov 2026, 12:00 EET');
    expect(timeFormatter('UTC', 'en')('2026-11-20T10:00:00Z')).toBe('20 Nov 2026, 10:00 UTC');
    expect(timeFormatter('Africa/Cairo', 'en')('not a time')).toBe('');
  });
});
