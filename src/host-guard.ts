/**
 * The Host names the dashboard answers: the loopback names (localhost, 127.0.0.1, [::1]) on the
 * port the request arrived on, and the names it is configured for (CASHOUT_DASHBOARD_HOSTS, the
 * address it listens on). A web page on any other name that resolves to the dashboard's address
 * (DNS rebinding) is answered 421 before any route runs, so it can neither read batches nor post.
 */

/** A host name, lower-case (IPv6 addresses in brackets), with a port or without one (any port). */
export interface HostEntry {
  readonly name: string;
  readonly port: number | undefined;
}

/** Loopback names the dashboard always answers, on its own port. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Text of the answer to a request for another Host name. */
export const MISDIRECTED_TEXT = 'This dashboard does not answer for that host name (see CASHOUT_DASHBOARD_HOSTS).\n';

const HOST_PATTERN = /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::(\d{1,5}))?$/;

/** Parses a Host header or a setting entry, "name" or "name:port"; undefined when it is not one. */
export function parseHost(text: string): HostEntry | undefined {
  const m = HOST_PATTERN.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65_535)) return undefined;
  return { name: m[1]!, port };
}

/**
 * True when a request with Host header `header` may be answered. `localPort` is the port the
 * request arrived on; a loopback name must name it (a Host without a port means port 80).
 * `configured` entries match their name on their port (80 or 443 for a Host without one), or on
 * any port when they have none.
 */
export function hostAllowed(
  header: string | undefined,
  localPort: number | undefined,
  configured: readonly HostEntry[],
): boolean {
  const host = header === undefined ? undefined : parseHost(header);
  if (!host) return false;
  if (LOOPBACK_HOST_NAMES.includes(host.name) && (host.port ?? 80) === localPort) return true;
  const portMatches = (c: HostEntry) =>
    c.port === undefined || c.port === host.port || (host.port === undefined && (c.port === 80 || c.port === 443));
  return configured.some((c) => c.name === host.name && portMatches(c));
}
