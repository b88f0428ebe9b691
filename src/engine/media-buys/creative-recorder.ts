/**
 * Where a buy's creatives begin, and where they hear how their send went: an
 * operation write hook (OperationsRepo.addWriteHook), so it runs in the very
 * commit of a `sync_creatives` operation's change, whichever path made it (the
 * call's reply, a webhook, a poll, reconciliation, a person's answer).
 *
 * - Stored: the creatives it carries are recorded on the buy (`processing`, the
 *   review's clock started, the buy's creative timer set), with a `creatives_sent`
 *   event naming who sent them. A creative sent before under the same id starts
 *   afresh: the corrected version is reviewed anew.
 * - Completed: each item's per-item status is recorded as advisory only; an item
 *   the seller refused outright (`action: failed`) is a rejection with the
 *   seller's errors as its reason, brought to a person (creative-inbox.ts) in the
 *   same commit, as is any rejection learnt while the sync was still running.
 * - Failed, rejected or canceled: its creatives never reached review; they are
 *   marked so, with the operation's error, and no longer followed.
 *
 * The buy is found through the operation's parents: a sync sent for a buy is a
 * child of the buy's create; a person's correction is a child of the sync whose
 * rejection it answers.
 */
import type { Logger } from 'pino';
import { packagesByCreative, type SyncInput } from '../../domain/creative-request.js';
import { creativeFacts, nextCreativeCheck, readSyncReply, type CreativePolicy, type SyncItem } from '../../domain/creative-review.js';
import { trimmedReason } from '../../domain/creatives.js';
import { withNextCheck } from '../../domain/media-buy-timers.js';
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import type { EventRow, MediaBuyRow, NotificationRow, OperationRow, Store } from '../../store/index.js';
import { trackedOf } from '../../store/creatives-repo.js';
import type { NewEvent } from '../../store/operations-repo.js';
import type { Tx } from '../../store/tx.js';
import type { CreativeInbox } from './creative-inbox.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How far up a chain of corrections the buy is looked for (each correction is one step). */
const MAX_PARENT_STEPS = 50;

export class CreativeRecorder {
  constructor(private readonly deps: { store: Store; inbox: CreativeInbox; policy: CreativePolicy; random: () => number; log: Logger }) {}

  /** The hook: cheap checks first, since it sees every operation change. */
  readonly onOperationWrite = async (trx: Tx, row: OperationRow, events: EventRow[], now: number): Promise<NotificationRow[]> => {
    if (row.type !== 'sync_creatives' || row.parent_id === null) return [];
    if (events.some((e) => e.kind === 'created')) return this.sent(trx, row, events, now);
    const ended = events.some((e) => e.kind === 'transition' && e.to_status !== null && isTerminal(e.to_status as OperationStatus));
    return ended ? this.ended(trx, row, now) : [];
  };

  /** The live buy a sync_creatives operation was made for, if any. */
  async buyOf(trx: Tx, op: Pick<OperationRow, 'parent_id'>): Promise<MediaBuyRow | undefined> {
    let parentId = op.parent_id;
    for (let step = 0; parentId !== null && step < MAX_PARENT_STEPS; step++) {
      const parent = await trx.selectFrom('operations').select(['id', 'type', 'parent_id']).where('id', '=', parentId).executeTakeFirst();
      if (!parent) return undefined;
      if (parent.type === 'create_media_buy') return this.deps.store.mediaBuys.byOperation(parent.id, trx);
      if (parent.type !== 'sync_creatives') return undefined;
      parentId = parent.parent_id;
    }
    return undefined;
  }

  private async sent(trx: Tx, op: OperationRow, events: EventRow[], now: number): Promise<NotificationRow[]> {
    const buy = await this.buyOf(trx, op);
    if (!buy) return [];
    const request = JSON.parse(op.request_body) as Json;
    const creatives = (Array.isArray(request.creatives) ? request.creatives : []).filter(isObject).filter((c) => typeof c.creative_id === 'string');
    if (creatives.length === 0) return [];
    const assignments = Array.isArray(request.assignments) ? (request.assignments.filter(isObject) as unknown as SyncInput['assignments']) : undefined;
    const packages = packagesByCreative({ creatives, ...(assignments ? { assignments } : {}) });
    const actor = events.find((e) => e.kind === 'created')?.actor ?? null;
    const written = await this.deps.store.mediaBuys.mutateIn(
      trx,
      buy.id,
      null,
      async (b, t) => {
        await this.deps.store.creatives.upsertIn(
          t,
          creatives.map((c) => ({
            buy_id: b.id,
            creative_id: String(c.creative_id),
            tenant_id: b.tenant_id,
            name: typeof c.name === 'string' ? c.name.slice(0, 500) : null,
            status: 'processing',
            package_ids: JSON.stringify(packages.get(String(c.creative_id)) ?? []),
            approvals: '[]',
            operation_id: op.id,
            sync_state: 'sending',
            sent_at: now,
            review_deadline_at: now + this.deps.policy.approvalTimeoutMs,
            stalled: 0,
            created_at: now,
            updated_at: now,
          })),
        );
        const patch = await this.timerPatch(t, b, now);
        const detail = { operation_id: op.id, creative_ids: creatives.map((c) => String(c.creative_id)), ...(op.parent_id !== b.operation_id ? { corrects: op.parent_id } : {}) };
        const event: NewEvent = { source: 'user', kind: 'creatives_sent', at: now, detail, ...(actor ? { actor } : {}) };
        return { patch, events: [event], value: null };
      },
      now,
    );
    return written.outcome === 'applied' ? written.notifications : [];
  }

  private async ended(trx: Tx, op: OperationRow, now: number): Promise<NotificationRow[]> {
    const mine = await this.deps.store.creatives.forOperation(op.id, trx);
    if (mine.length === 0) return [];
    const buyId = mine[0]!.buy_id;
    const completed = op.status === 'completed';
    const items = completed && op.result ? readSyncReply(JSON.parse(op.result) as Json) : new Map<string, SyncItem>();
    const opError = !completed && op.error ? (JSON.parse(op.error) as Json) : undefined;
    const written = await this.deps.store.mediaBuys.mutateIn(
      trx,
      buyId,
      null,
      async (b, t) => {
        const events: NewEvent[] = [];
        for (const row of await this.deps.store.creatives.forOperation(op.id, t)) {
          const c = trackedOf(row);
          if (!completed) {
            const error = { code: typeof opError?.code === 'string' ? opError.code : op.status.toUpperCase(), message: typeof opError?.message === 'string' ? opError.message : `the sync_creatives operation ended ${op.status}` };
            await this.deps.store.creatives.updateIn(t, b.id, c.creative_id, { sync_state: 'failed', sync_error: JSON.stringify(error) }, now);
            events.push({ source: 'call', kind: 'creative_not_sent', at: now, detail: creativeFacts(c, { error }) });
            continue;
          }
          const item = items.get(c.creative_id);
          if (item?.action === 'failed') {
            // Refused outright: the seller's errors are the reason a person needs to correct it.
            const reason = trimmedReason(item.errors?.map((e) => [e.code, e.message].filter(Boolean).join(': ')).join('; ')) ?? 'the seller refused this creative in its sync_creatives reply';
            await this.deps.store.creatives.updateIn(
              t,
              b.id,
              c.creative_id,
              { sync_state: 'synced', synced_at: now, advisory_status: null, sync_error: JSON.stringify({ code: 'SYNC_ITEM_FAILED', errors: item.errors ?? [] }), status: 'rejected', rejection_reason: reason, decided_at: now, inbox_state: 'owed' },
              now,
            );
            events.push({ source: 'call', kind: 'creative_rejected', at: now, detail: creativeFacts(c, { status: 'rejected', from: c.status, rejection_reason: reason, errors: item.errors ?? [] }) });
            continue;
          }
          // Advisory only: the seller's review is learnt by asking (creative-review.ts), never from this reply.
          await this.deps.store.creatives.updateIn(t, b.id, c.creative_id, { sync_state: 'synced', synced_at: now, advisory_status: item?.advisory_status ?? null }, now);
          if (item?.assignment_errors) events.push({ source: 'call', kind: 'creative_assignment_failed', at: now, detail: creativeFacts(c, { assignment_errors: item.assignment_errors }) });
        }
        return { patch: await this.timerPatch(t, b, now), events, value: null };
      },
      now,
    );
    const notifications = written.outcome === 'applied' ? [...written.notifications] : [];
    // Rejections learnt by now (refused items, or reviews seen while it ran) go to a person with its end.
    const asked = await this.deps.inbox.askIn(trx, op, buyId);
    return asked ? [...notifications, ...asked.notifications] : notifications;
  }

  /** The buy's creative timer after a change of its creatives (read on `t`, which holds the buy's lock). */
  private async timerPatch(t: Tx, b: MediaBuyRow, now: number): Promise<Partial<MediaBuyRow>> {
    if (b.ended_at !== null) return {};
    const all = (await this.deps.store.creatives.forBuy(b.id, t)).map(trackedOf);
    const next = nextCreativeCheck(all, this.deps.policy, now, this.deps.random);
    return withNextCheck({ status_check_at: b.status_check_at, report_due_at: b.report_due_at, delivery_poll_at: b.delivery_poll_at, creative_check_at: next });
  }
}
