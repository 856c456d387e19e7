/**
 * Times as the dashboard shows them: in the team's time zone (`CASHOUT_TIMEZONE`, Africa/Cairo by
 * default) with the zone's short name, in the page's language (Arabic pages use Latin digits, as
 * finance staff read amounts and dates in them).
 */
import type { Language } from './i18n/index.js';

/** Formats ISO times for one time zone and language; undefined or unreadable input gives ''. */
export function timeFormatter(timeZone: string, lang: Language): (iso: string | undefined) => string {
  const format = new Intl.DateTimeFormat(lang === 'ar' ? 'ar-EG-u-nu-latn' : 'en-GB', {
    timeZone,
    year: 'numeric',
    month: 'short',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  });
  return (iso) => {
    const ms = iso === undefined ? Number.NaN : Date.parse(iso);
    return Number.isNaN(ms) ? '' : format.format(ms);
  };
}
