/**
 * An answer that corrects a seller's question with no continuation to answer on is sent
 * as a new operation (a new idempotency_key: the payload changed), a child of the one it
 * supersedes (AnswerService.supersede writes both in one commit). This builds that child:
 * the original request without our own parts, the person's corrections over it, and what
 * a new spend gets afresh (the tenant's approval rule, a governance check, a reporting
 * webhook of its own).
 */
import { mergeParams, type InputRequest, type RecordedAnswer } from '../domain/input-request.js';
import { freshState, parseGovernance } from '../domain/governed-flow.js';
import type { OperationRow, Store } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import type { Clock } from './clock.js';
import { EngineError } from './errors.js';
import { reportingPlanOf } from './media-buys/reporting-choice.js';
import { buildOperation, requestWithoutOurParts, type BuiltOperation, type WebhookMode } from './operation-builder.js';
import type { OperationService } from './operation-service.js';
import type { SpendApproval } from './spend-approval.js';

export interface CorrectedOperation {
  child: BuiltOperation;
  /** Why the corrected buy is held for a person's approval before it is sent, if it is. */
  hold: InputRequest | undefined;
  /** When it was built (its creation time). */
  now: number;
}

export async function correctedOperation(
  deps: { store: Store; secrets: SecretBox; operations: OperationService; spendApproval: SpendApproval; clock: Clock },
  row: OperationRow,
  recorded: RecordedAnswer,
): Promise<CorrectedOperation> {
  const { store, secrets, operations, spendApproval, clock } = deps;
  const agent = await store.agents.get(row.agent_id);
  if (!agent) throw new EngineError('agent_not_found', `agent ${row.agent_id} not found`, 404);
  const original = operations.requests.open(row.request_body);
  const ourReporting = row.reporting_token != null;
  const params = mergeParams(requestWithoutOurParts(original, ourReporting), operations.requests.openedIn(recorded.params) ?? {});
  // A corrected buy gets a reporting webhook of its own, asked for as the original's was.
  const reporting = row.type === 'create_media_buy' && params.reporting_webhook === undefined ? reportingPlanOf(original, ourReporting) : undefined;
  // The corrected buy is a new spend: the tenant's own rule applies to it too.
  const hold = await spendApproval.holdFor(row.tenant_id, row.type, params);
  const now = clock.now();
  // A governed buy's correction is a new spend: it is checked afresh before it is sent.
  const parentGovernance = parseGovernance(row.governance);
  const governance = parentGovernance ? freshState(parentGovernance, now) : undefined;
  const child = buildOperation(
    {
      tenantId: row.tenant_id,
      agentId: row.agent_id,
      task: row.type,
      params,
      webhook: row.webhook_mode as WebhookMode,
      parentId: row.id,
      actor: recorded.actor,
      ...(hold ? { hold } : {}),
      ...(governance ? { governance } : {}),
      ...(reporting !== undefined ? { reporting } : {}),
    },
    agent,
    secrets,
    { ...operations.options, leaseMs: operations.leaseMs },
    now,
    true,
  );
  return { child, hold, now };
}
