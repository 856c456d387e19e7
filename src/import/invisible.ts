/**
 * Invisible characters: the one definition the row rules, the wording table and the reports use.
 *
 * Refused in every value sent to the service (`./validate-row.ts`): every Unicode format character
 * (general category Cf: direction marks, embeddings, overrides and isolates, zero-width space,
 * joiner and non-joiner, word joiner, invisible operators, soft hyphen, Arabic letter mark,
 * Mongolian vowel separator, byte-order mark, tag characters…) and the line and paragraph
 * separators U+2028 and U+2029 (categories Zl, Zp). They make two values that look the same
 * differ for the service, can reorder what a person sees, and break a line where none is shown.
 * Control characters (category Cc) are refused by their own rule.
 */

/** One invisible character (format character, line or paragraph separator). */
export const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}]/u;

/** Every invisible character of a value (global: use with `replace`, never with `test`). */
export const INVISIBLE_ALL = /[\p{Cf}\p{Zl}\p{Zp}]/gu;

/** A control character (category Cc, C0 and C1, tab and line breaks included). */
export const CONTROL_ANY = /\p{Cc}/u;

/** Any character a rule on text could refuse: one test for the common, clean value. */
export const SUSPECT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Characters shown as `\uXXXX` in messages, so that a person sees where they are (no-break space included). */
export const SHOWN_ESCAPED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00a0]/gu;

/** Unicode names of the invisible characters met in payout files (the Unicode Character Database). */
const NAMES: Readonly<Record<number, string>> = {
  0x00a0: 'NO-BREAK SPACE',
  0x00ad: 'SOFT HYPHEN',
  0x0600: 'ARABIC NUMBER SIGN',
  0x0601: 'ARABIC SIGN SANAH',
  0x0602: 'ARABIC FOOTNOTE MARKER',
  0x0603: 'ARABIC SIGN SAFHA',
  0x0604: 'ARABIC SIGN SAMVAT',
  0x0605: 'ARABIC NUMBER MARK ABOVE',
  0x061c: 'ARABIC LETTER MARK',
  0x06dd: 'ARABIC END OF AYAH',
  0x070f: 'SYRIAC ABBREVIATION MARK',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0x206a: 'INHIBIT SYMMETRIC SWAPPING',
  0x206b: 'ACTIVATE SYMMETRIC SWAPPING',
  0x206c: 'INHIBIT ARABIC FORM SHAPING',
  0x206d: 'ACTIVATE ARABIC FORM SHAPING',
  0x206e: 'NATIONAL DIGIT SHAPES',
  0x206f: 'NOMINAL DIGIT SHAPES',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE (byte-order mark)',
  0xfff9: 'INTERLINEAR ANNOTATION ANCHOR',
  0xfffa: 'INTERLINEAR ANNOTATION SEPARATOR',
  0xfffb: 'INTERLINEAR ANNOTATION TERMINATOR',
  0xe0001: 'LANGUAGE TAG',
};

/** "U+200D ZERO WIDTH JOINER": the code point and, where known, the Unicode name of one character. */
export function unicodeName(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMES[cp] ?? (cp >= 0xe0020 && cp <= 0xe007f ? `TAG ${String.fromCodePoint(cp - 0xe0000)}` : undefined);
  return name === undefined ? `${hex} (an invisible format character)` : `${hex} ${name}`;
}

/** The distinct invisible characters of `value`, in order of first appearance, named ("U+200F RIGHT-TO-LEFT MARK"). */
export function namedInvisibles(value: string): string[] {
  const seen = new Set<string>();
  for (const m of value.matchAll(INVISIBLE_ALL)) seen.add(m[0]);
  return [...seen].map(unicodeName);
}

/** `value` without its invisible characters; line and paragraph separators become a space. */
export function withoutInvisibles(value: string): string {
  return value.replace(INVISIBLE_ALL, (c) => (c === '\u2028' || c === '\u2029' ? ' ' : ''));
}
