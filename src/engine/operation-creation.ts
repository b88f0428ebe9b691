/**
 * Storing a new operation: its row built (operation-builder.ts) and inserted with
 * its creation events in one commit (with the API's Idempotency-Key reservation,
 * when the request brings one to reserve), or, when the same (agent,
 * idempotency_key) already has an operation, that one if it is the same request.
 */
import type { Store, OperationRow } from '../store/index.js';
import { isUniqueViolation } from '../store/db.js';
import { inWriteTransaction } from '../store/tx.js';
import type { SecretBox } from '../store/secret-box.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import { EngineError } from './errors.js';
import type { Metrics } from './metrics.js';
import { buildOperation, requestFingerprint, type BuildOptions, type CreateOperationInput } from './operation-builder.js';
import type { RequestSealer } from './sealed-request.js';
import { chooseReporting, withReportingChoice } from './media-buys/reporting-choice.js';

export interface CreationDeps {
  store: Store;
  secrets: SecretBox;
  bus: ChangeBus;
  metrics: Metrics;
  clock: Clock;
  requests: RequestSealer;
}

/**
 * Stores the operation; `inserted` is false when the same (agent, idempotency_key) already
 * had one. With `claim` it is stored leased by us, and with `sendingNowTimeoutMs` in the
 * options also already marked `calling_adcp` (the caller sends it at once).
 */
export async function insertOperation(
  deps: CreationDeps,
  input: CreateOperationInput,
  options: BuildOptions,
  claim: boolean,
): Promise<{ row: OperationRow; inserted: boolean }> {
  const agent = await deps.store.agents.getForTenant(input.tenantId, input.agentId);
  if (!agent) throw new EngineError('agent_not_found', `agent ${input.agentId} not found`, 404);
  if (input.task === 'create_media_buy' && input.reporting === undefined) {
    // Every buy we send carries our reporting webhook unless it brings its own (reporting-choice.ts).
    const choice = await chooseReporting(deps.store, {
      tenantId: input.tenantId,
      agentId: agent.id,
      params: input.params,
      ...(input.reportingAsked ? { asked: input.reportingAsked } : {}),
      governed: input.governance !== undefined,
      publicUrl: options.publicUrl,
    });
    input = withReportingChoice(input, choice);
  }
  const { row, params, events } = buildOperation(input, agent, deps.secrets, options, deps.clock.now(), claim);
  let written;
  const reservation = input.reservation;
  try {
    written = reservation
      ? await inWriteTransaction(deps.store.db, async (trx) => {
          await reservation.reserveIn(trx);
          return deps.store.operations.insertIn(trx, row, events);
        })
      : await deps.store.operations.insert(row, events);
    reservation?.committed();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { row: await existingFor(deps, row, params), inserted: false };
  }
  deps.bus.publish({ operation: row, ...written });
  deps.metrics.transition(row.type, 'none', 'requested', 'user');
  if (row.status === 'calling_adcp') deps.metrics.transition(row.type, 'requested', 'calling_adcp', 'call');
  return { row, inserted: true };
}

/** The operation already holding this (agent, idempotency_key): the same request is the same operation. */
async function existingFor(deps: CreationDeps, attempted: OperationRow, params: Record<string, unknown>): Promise<OperationRow> {
  const existing = await deps.store.operations.findByIdempotencyKey(attempted.agent_id, attempted.idempotency_key);
  if (!existing || existing.tenant_id !== attempted.tenant_id) {
    throw new EngineError('idempotency_conflict', 'this idempotency_key is already in use', 409);
  }
  // Compare what the seller would compare: the request without our per-attempt parts.
  const ourReporting = Boolean(existing.reporting_token || attempted.reporting_token);
  if (existing.type !== attempted.type || requestFingerprint(deps.requests.open(existing.request_body), ourReporting) !== requestFingerprint(params, ourReporting)) {
    throw new EngineError('idempotency_conflict', 'this idempotency_key was used for a different request', 409);
  }
  return existing;
}
