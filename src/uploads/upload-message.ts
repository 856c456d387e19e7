/**
 * A refusal of an uploaded file in the words of the way it came in. The reading code speaks of a
 * file by its path and of the command line's options (`--encoding`, `--delimiter`, `--partial`,
 * …); an upload has neither. The server's copy of the file is named by the name it was uploaded
 * as (its folder on the server is nobody's business), and each option by what the way in offers:
 * `api`, the query parameters of `POST /api/v1/batches`; `page`, the upload page, which reads
 * UTF-8 files separated by commas only, so what to change in the file; `inbox`, the inbox folder,
 * which reads them alike, so what to change in the file before dropping it again.
 */

/** Command-line options and the query parameters of the HTTP API's upload that stand for them. */
const API_PARAMETERS: readonly (readonly [RegExp, string])[] = [
  [/run again without --(encoding|delimiter)\b/g, 'send it again without $1='],
  [/run again with --(encoding|delimiter) ([^\s,;:)]+)/g, 'send it again with $1=$2'],
  [/check the --encoding option/g, 'check the encoding= parameter'],
  [/--(encoding|delimiter) ([^\s,;:)]+)/g, '$1=$2'],
  [/--pay-again "<why>"/g, 'pay_again=<why>'],
  [/--pay-again\b/g, 'pay_again=<why>'],
  [/--partial\b/g, 'partial=true'],
  [/--force\b/g, 'force=true'],
  [/--strict-duplicates\b/g, 'strict_duplicates=true'],
  [/\brun again\b/g, 'send it again'],
  [/\bimport (it )?with\b/g, 'send it with'],
];

/** Where a message starts telling which option to use for the encoding or the delimiter. */
const OPTION_ADVICE =
  /[,;:]?\s*(then )?(run again with(out)? --(encoding|delimiter)|check the --encoding option)[\s\S]*$/;

/**
 * `message` of a refusal of the upload whose copies on the server are `copies` (the file as
 * received, and the CSV made of a workbook), for a person who uploaded it as `name` through `via`.
 * Returns the message unchanged where it names neither a copy nor an option.
 */
export function uploadMessage(
  message: string,
  copies: readonly string[],
  name: string,
  via: 'api' | 'page' | 'inbox',
): string {
  let text = message;
  for (const copy of copies) if (copy !== '') text = text.split(copy).join(`"${name}"`);
  if (via === 'api') {
    for (const [pattern, replacement] of API_PARAMETERS) text = text.replace(pattern, replacement);
    return text;
  }
  if (!/--(encoding|delimiter)\b/.test(text)) return text;
  const separated = /--delimiter\b/.test(text);
  const again = via === 'inbox' ? 'put it in the inbox again' : 'upload it again';
  const advice = separated
    ? `save it with commas between the columns (in Excel: Save As, then "CSV UTF-8") and ${again}`
    : `save it as "CSV UTF-8" (in Excel: Save As, then "CSV UTF-8") and ${again}`;
  let cut = text.replace(OPTION_ADVICE, '');
  // The advice cut may have held the closing bracket of an aside: close it.
  const open = (cut.match(/\(/g) ?? []).length - (cut.match(/\)/g) ?? []).length;
  if (open > 0) cut += ')'.repeat(open);
  return `${cut}${cut.endsWith('.') ? '' : ';'} ${advice}`;
}
