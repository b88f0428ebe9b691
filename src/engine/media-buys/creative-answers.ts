/**
 * A person's answer to a rejected creative (README, Creatives; the inbox item of
 * creative-inbox.ts), taken through the AnswerService like every answer (the same
 * role, question check, locked write and `answered` event with the key's name):
 *
 * - `respond` with `params: {creatives: [...], assignments?}` sends the corrected
 *   creatives as a new `sync_creatives` operation, a child of the one that sent
 *   the rejected ones (a new idempotency key: the payload changed), inserted in the
 *   commit that takes the answer; without assignments, each corrected creative goes
 *   to the packages the rejected one was meant for. Checked like any send first:
 *   bad input is a 400 and nothing is written or sent.
 * - `reject` dismisses the rejection: the creative stays rejected, nothing is sent.
 *
 * Either way the operation, which had ended `completed`, keeps its status: the
 * answer only resolves its inbox item. The buy records the answer too, with who.
 */
import { correctionInput, isSyncProblem } from '../../domain/creative-request.js';
import type { InputRequest, RecordedAnswer } from '../../domain/input-request.js';
import type { OperationRow, Store } from '../../store/index.js';
import type { NewEvent, OperationPatch, Written } from '../../store/operations-repo.js';
import type { SecretBox } from '../../store/secret-box.js';
import type { Tx } from '../../store/tx.js';
import { answered, answeredEvent } from '../answer-records.js';
import type { ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import { EngineError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { buildOperation, type WebhookMode } from '../operation-builder.js';
import type { OperationService } from '../operation-service.js';
import { checkedSend, syncParams } from './creative-service.js';

/** What the AnswerService lends: its one locked write that takes an answer, and its short wait for a send. */
export interface AnswerTools {
  take(plan: (current: OperationRow) => { patch: OperationPatch; events: NewEvent[] }, alongside?: (trx: Tx) => Promise<void>): Promise<{ taken: boolean; row: OperationRow }>;
  drive(row: OperationRow, work: () => Promise<void>): Promise<OperationRow>;
}

export class CreativeAnswers {
  constructor(private readonly deps: { store: Store; secrets: SecretBox; bus: ChangeBus; operations: OperationService; metrics: Metrics; clock: Clock }) {}

  async answer(row: OperationRow, recorded: RecordedAnswer, request: InputRequest, tools: AnswerTools): Promise<OperationRow> {
    const { store } = this.deps;
    const buy = request.media_buy ? await store.mediaBuys.getForTenant(row.tenant_id, request.media_buy.id) : undefined;
    if (!buy) throw new EngineError('media_buy_not_found', `the media buy of operation ${row.id} is no longer known`, 404);
    const rejected = request.creatives ?? [];
    const ids = rejected.map((c) => c.creative_id);
    if (recorded.decision === 'reject') {
      const { row: result } = await tools.take(
        (current) => ({ patch: answered(recorded), events: [answeredEvent(current, recorded)] }),
        (trx) => this.resolve(trx, buy.id, row.id, ids, recorded),
      );
      return result;
    }

    // respond: the corrected creatives, checked as any send is, before anything is written.
    const params = this.deps.operations.requests.openedIn(recorded.params) ?? {};
    const corrected = correctionInput(params, new Map(rejected.map((c) => [c.creative_id, c.package_ids])));
    if (isSyncProblem(corrected)) throw new EngineError(corrected.code, corrected.message, corrected.status, corrected.details);
    const input = checkedSend(buy, corrected);
    const agent = await store.agents.get(row.agent_id);
    if (!agent) throw new EngineError('agent_not_found', `agent ${row.agent_id} not found`, 404);
    const { operations, secrets, clock, bus, metrics } = this.deps;
    const child = buildOperation(
      { tenantId: row.tenant_id, agentId: row.agent_id, task: 'sync_creatives', params: syncParams(buy, input), webhook: row.webhook_mode as WebhookMode, parentId: row.id, actor: recorded.actor },
      agent,
      secrets,
      { ...operations.options, leaseMs: operations.leaseMs },
      clock.now(),
      true,
    );
    const withChild: RecordedAnswer = { ...recorded, child_id: child.row.id };
    let childWritten: Written = { events: [], notifications: [] };
    const { taken, row: result } = await tools.take(
      (current) => ({ patch: answered(withChild), events: [answeredEvent(current, recorded)] }),
      async (trx) => {
        await this.resolve(trx, buy.id, row.id, ids, withChild);
        // Its creatives are recorded on the buy by the insert's own hook (creative-recorder.ts).
        childWritten = await store.operations.insertIn(trx, child.row, child.events);
      },
    );
    if (!taken) return result;
    bus.publish({ operation: child.row, ...childWritten });
    metrics.transition(child.row.type, 'none', 'requested', 'user');
    return tools.drive(child.row, () => operations.send(child.row));
  }

  /** The rejections the question named are answered: on each creative, and as the buy's event with who and how. */
  private async resolve(trx: Tx, buyId: string, operationId: string, ids: string[], recorded: RecordedAnswer): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const dismissed = recorded.decision === 'reject';
    await store.mediaBuys.mutateIn(
      trx,
      buyId,
      null,
      async (b, t) => {
        const open = (await store.creatives.forOperation(operationId, t)).filter((c) => ids.includes(c.creative_id) && (c.inbox_state === 'owed' || c.inbox_state === 'asked'));
        for (const c of open) {
          await store.creatives.updateIn(t, b.id, c.creative_id, { inbox_state: 'answered', ...(dismissed ? { dismissed_at: now, dismissed_by: recorded.actor } : {}) }, now);
        }
        const detail = {
          operation_id: operationId,
          creative_ids: ids,
          decision: dismissed ? 'dismissed' : 'corrected',
          ...(recorded.child_id ? { child_id: recorded.child_id } : {}),
          ...(recorded.message ? { message: recorded.message } : {}),
        };
        return { events: [{ source: 'user', kind: 'creative_rejection_answered', at: now, actor: recorded.actor, detail }], value: null };
      },
      now,
    );
  }
}
