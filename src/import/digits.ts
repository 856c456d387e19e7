/** Arabic-Indic (U+0660–0669) and Extended Arabic-Indic (U+06F0–06F9) digits and separators. */
export const NON_LATIN_DIGIT = /[\u0660-\u0669\u06f0-\u06f9\u066b\u066c]/;

/** Replaces Arabic-Indic digits with 0-9, the Arabic decimal separator with "." and drops the Arabic thousands separator. */
export function toLatinDigits(value: string): string {
  return value.replace(/[\u0660-\u0669\u06f0-\u06f9\u066b\u066c]/g, (c) => {
    const code = c.charCodeAt(0);
    if (code === 0x066b) return '.';
    if (code === 0x066c) return '';
    return String(code >= 0x06f0 ? code - 0x06f0 : code - 0x0660);
  });
}
