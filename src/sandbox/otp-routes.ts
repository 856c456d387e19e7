/**
 * The sandbox's OTP dialog (interface doc §4, §6.1), for charges answered with `three_d_secured`:
 * - `GET /js/plugins/OTPPaymentPlugin.js` (§4): the script that creates `SERVICEOTPDIALOG` and
 *   mounts the dialog on `#service-otp-container` (`./static/OTPPaymentPlugin.js`);
 * - `GET /otp/dialog/:id`: the dialog itself, shown in an iframe by the script;
 * - `GET /otp/charges/:id`: what the dialog shows (amount, last four digits, state);
 * - `POST /otp/charges/:id` with `{ "otp": "123456" }`: settles the charge (PAID with the test
 *   card's OTP, FAILED with any other: assumption `wrongOtp`) and answers the §6.1 message, which
 *   the dialog posts to the page;
 * - `GET /demo/charge`: a demo page that opens the dialog and shows the message it receives;
 * - `GET /otp/assets/<name>`: the dialog's and the demo's scripts and styles (and an empty
 *   `/favicon.ico`).
 * How the dialog is served is not in the document: these paths (all but the script's) are ours.
 * They need no token: they are what a customer's browser loads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { OTP_PLUGIN_PATH } from '../contract/charge-api.js';
import { PACKAGE_ROOT } from '../paths.js';
import { failureBody, invalidBody, readJsonBody } from './answers.js';
import type { ChargeDesk } from './charge-desk.js';

/** Folder of the browser files (shipped with the package: package.json "files"). */
export const SANDBOX_STATIC_DIR = join(PACKAGE_ROOT, 'src', 'sandbox', 'static');

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

/** Files served under `/otp/assets/`. */
const ASSETS = ['otp-dialog.css', 'otp-dialog.js', 'page-helper.js', 'demo.css', 'demo.js'] as const;

/** Reads a browser file of the sandbox (see `SANDBOX_STATIC_DIR`). */
export function sandboxStaticFile(name: string): string {
  return readFileSync(join(SANDBOX_STATIC_DIR, name), 'utf8');
}

const REFERENCE = /^\d{1,18}$/;

/** Adds the OTP dialog's routes to `app`, settling charges recorded in `desk`. */
export function registerOtpRoutes(app: FastifyInstance, deps: { desk: ChargeDesk }): void {
  const { desk } = deps;
  const names = ['OTPPaymentPlugin.js', 'otp-dialog.html', 'demo.html', ...ASSETS];
  const files = new Map(names.map((n) => [n, sandboxStaticFile(n)]));
  const send = (reply: FastifyReply, name: string, csp?: string): FastifyReply => {
    reply.header('content-type', TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream');
    reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache');
    if (csp) reply.header('content-security-policy', csp);
    return reply.send(files.get(name));
  };
  const notFound = (reply: FastifyReply, text: string) => reply.code(404).send(failureBody(404, text));

  app.get(OTP_PLUGIN_PATH, async (_req, reply) => send(reply, 'OTPPaymentPlugin.js'));

  app.get<{ Params: { name: string } }>('/otp/assets/:name', async (req, reply) => {
    const name = req.params.name;
    return (ASSETS as readonly string[]).includes(name) ? send(reply, name) : notFound(reply, 'Not Found');
  });

  // Any page may show the dialog in a frame (`frame-ancestors *`); it loads only its own files.
  app.get<{ Params: { id: string } }>('/otp/dialog/:id', async (req, reply) => {
    if (!REFERENCE.test(req.params.id)) return notFound(reply, 'Not Found');
    return send(reply, 'otp-dialog.html', "default-src 'self'; frame-ancestors *; base-uri 'none'; form-action 'self'");
  });

  // Browsers ask for it with every page; no icon, and no 404 in their consoles.
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).send());

  // The demo page may frame any page (the dialog, or another origin's page in a test).
  const demoPolicy = "default-src 'self'; frame-src *; base-uri 'none'";
  app.get('/demo/charge', async (_req, reply) => send(reply, 'demo.html', demoPolicy));

  app.get<{ Params: { id: string } }>('/otp/charges/:id', async (req, reply) => {
    const charge = REFERENCE.test(req.params.id) ? desk.get(Number(req.params.id)) : undefined;
    if (!charge) return notFound(reply, 'No charge has this service_reference_id.');
    const { service_reference_id, amount, card_last_four, status } = charge;
    return { service_reference_id, amount, card_last_four, status };
  });

  app.post<{ Params: { id: string } }>('/otp/charges/:id', async (req, reply) => {
    if (!REFERENCE.test(req.params.id)) return notFound(reply, 'No charge has this service_reference_id.');
    const parsed = readJsonBody(req);
    if (!parsed.ok) return reply.code(422).send(invalidBody({ body: parsed.reason }));
    const otp = (parsed.value as { otp?: unknown } | null)?.otp;
    if (typeof otp !== 'string' || !/^\d{4,8}$/.test(otp)) {
      return reply.code(422).send(invalidBody({ otp: 'The otp field must be 4 to 8 digits.' }));
    }
    const settled = desk.settle(Number(req.params.id), otp);
    if (settled.ok) return settled.message;
    if (settled.reason === 'not_found') return notFound(reply, 'No charge has this service_reference_id.');
    return reply.code(409).send(failureBody(409, 'This charge is not waiting for an OTP.'));
  });
}
