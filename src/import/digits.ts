/**
 * Digits other than 0-9 that spreadsheets and phones write: Arabic-Indic (U+0660–0669), Extended
 * Arabic-Indic (U+06F0–06F9) and full-width (U+FF10–FF19) digits, with the Arabic decimal and
 * thousands separators (U+066B, U+066C) and the full-width full stop and comma (U+FF0E, U+FF0C).
 */
export const NON_LATIN_DIGIT = /[\u0660-\u0669\u06f0-\u06f9\uff10-\uff19\u066b\u066c\uff0c\uff0e]/;

const NON_LATIN_ALL = /[\u0660-\u0669\u06f0-\u06f9\uff10-\uff19\u066b\u066c\uff0c\uff0e]/g;

/**
 * Replaces those digits with 0-9, the Arabic decimal separator and the full-width full stop with
 * ".", the full-width comma with "," and drops the Arabic thousands separator.
 */
export function toLatinDigits(value: string): string {
  return value.replace(NON_LATIN_ALL, (c) => {
    const code = c.charCodeAt(0);
    if (code === 0x066b || code === 0xff0e) return '.';
    if (code === 0xff0c) return ',';
    if (code === 0x066c) return '';
    return String(code >= 0xff10 ? code - 0xff10 : code >= 0x06f0 ? code - 0x06f0 : code - 0x0660);
  });
}

/** What kind of digits `value` is written in, for messages: "Arabic-Indic", "full-width" or "other". */
export function digitKind(value: string): string {
  if (/[\uff10-\uff19]/.test(value)) return 'full-width';
  if (/[\u0660-\u0669\u06f0-\u06f9]/.test(value)) return 'Arabic-Indic';
  return 'non-Western';
}

/**
 * A number as a spreadsheet shows it in scientific notation (`2.01001E+11`): the digits past the
 * shown ones are lost, so no value can be suggested from it.
 */
export const SCIENTIFIC = /^[+-]?\d+(\.\d+)?[eE]\+?\d+$/;
