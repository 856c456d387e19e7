/**
 * The sandbox's card charge endpoint, `POST /api/v1/charge/card` (interface doc §2.1-2.3, §4, §5,
 * §7), answered like the withdrawal endpoint: the same token check (§5.1), latency and faults, and
 * failures in the §7 layout. In order:
 * - a token other than `Bearer <token>`: 401 (assumption `unauthenticated`); nothing recorded;
 * - a fault that creates nothing (500, 503, 429, hang), whatever the body;
 * - a body that is not a JSON object: 422, key `body`;
 * - a §2.1 field missing or breaking its rule, or a zero amount: 422 naming each field;
 * - a signature that is not the §5.2 signature of the fields: 422, key `signature` (assumption);
 * - a `merchant_reference_id` recorded before: 422 (assumption `duplicateReference`);
 * - otherwise the charge is recorded and, by the test card (`./test-cards.ts`): §2.2 (charged),
 *   §2.3 (`three_d_secured`, waiting for the OTP) or 400 (assumption `declinedCard`); a creating
 *   fault (reset, malformed 200, 500) may then spoil the answer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { CHARGE_PATH } from '../contract/charge-api.js';
import { failureBody, invalidBody, readJsonBody } from './answers.js';
import { SANDBOX_ASSUMPTIONS as A } from './assumptions.js';
import type { ChargeDesk } from './charge-desk.js';
import { validateChargeBody, type SandboxMerchant } from './charge-rules.js';
import type { FaultKind } from './faults.js';

/** What a POST endpoint of the sandbox shares with the others (see `./server.ts`). */
export interface EndpointKit {
  /** `onRequest` hook: notes the arrival, counts it, answers 401 to a wrong token. */
  readonly arrive: onRequestHookHandler;
  /** Draws the fault for one request. */
  nextFault(): FaultKind | 'none';
  /** Keeps the connection open without answering (a hang, or the sandbox closing). */
  hold(req: FastifyRequest, reply: FastifyReply): FastifyReply;
  /** Starts the request's latency; the function resolves true once it passed, false when closing. */
  startLatency(req: FastifyRequest): () => Promise<boolean>;
  /** Answers a fault that creates nothing; undefined for other kinds. */
  nonCreatingFault(kind: FaultKind | 'none', reply: FastifyReply): FastifyReply | undefined;
  /** Answers something just created with `status` and `body`, unless a creating fault spoils it. */
  createdAnswer(
    kind: FaultKind | 'none',
    req: FastifyRequest,
    reply: FastifyReply,
    status: number,
    body: object,
  ): FastifyReply;
}

/** Adds `POST /api/v1/charge/card` to `app`, recording charges in `desk` and checking signatures with `merchant`. */
export function registerChargeRoutes(
  app: FastifyInstance,
  kit: EndpointKit,
  deps: { desk: ChargeDesk; merchant: SandboxMerchant },
): void {
  const { desk, merchant } = deps;
  app.post(CHARGE_PATH, { onRequest: kit.arrive }, async (req, reply) => {
    const kind = kit.nextFault();
    if (kind === 'hang') return kit.hold(req, reply);
    const waited = kit.startLatency(req);
    const parsed = readJsonBody(req);
    const check = parsed.ok ? validateChargeBody(parsed.value, merchant) : undefined;
    if (!(await waited())) return kit.hold(req, reply);

    const faulted = kit.nonCreatingFault(kind, reply);
    if (faulted) return faulted;
    if (!parsed.ok) return reply.code(422).send(invalidBody({ body: parsed.reason }));
    if (!check?.ok) return reply.code(422).send(invalidBody(check?.errors ?? {}));

    const created = desk.create(check.body);
    if (created.outcome === 'duplicate') {
      return reply.code(422).send(invalidBody({ [A.duplicateReference.errorKey]: A.duplicateReference.text }));
    }
    const { charge } = created;
    switch (created.outcome) {
      case 'charged':
        return kit.createdAnswer(kind, req, reply, 200, {
          success: true,
          status_code: 200,
          status_description: A.chargedText.text,
          type: A.chargeType.text,
          service_reference_id: charge.service_reference_id,
          payment_gateway_reference_id: charge.payment_gateway_reference_id,
          merchant_reference_id: charge.merchant_reference_id,
        });
      case 'otp_required':
        return kit.createdAnswer(kind, req, reply, 200, {
          success: true,
          status_code: 200,
          status_description: A.otpRequiredText.text,
          type: A.chargeType.text,
          three_d_secured: true,
          service_reference_id: charge.service_reference_id,
        });
      case 'declined':
        const { status, text } = A.declinedCard;
        return kit.createdAnswer(kind, req, reply, status, failureBody(status, text));
    }
  });
}
