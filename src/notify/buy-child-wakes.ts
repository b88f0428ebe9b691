/**
 * A live buy changed by one of its child operations (pause, resume, cancel, refresh:
 * src/engine/media-buys/buy-recorder.ts applies their end to the buy in the operation's
 * own commit): the operation's change names only the operation, so live readers of
 * the buy (the MCP resource, the buy's page) are told by the buy's id here, and other
 * instances through NOTIFY. The buy is found by the operation's parent (the buy's
 * create): one read per ended child of a buy, which is rare; a failed read costs live
 * readers only their next refresh. So are the buy's creatives, which a sync_creatives
 * changes in its own commits (sent, ended, its rejection answered:
 * src/engine/media-buys/creative-recorder.ts); that buy is the one its creatives name.
 */
import type { OperationChange } from '../engine/change-bus.js';
import { endsBuyChild } from '../engine/media-buys/buy-recorder.js';
import type { MediaBuyRow } from '../store/index.js';
import type { OperationWakes } from './operation-wakes.js';

export interface BuyChildWakeDeps {
  /** The buy a create_media_buy operation made (MediaBuysRepo.byOperation). */
  buyOf(operationId: string): Promise<Pick<MediaBuyRow, 'id' | 'tenant_id'> | undefined>;
  wakes: OperationWakes;
  /** Tells other instances (PgNotifier.publishIds); absent on SQLite, one process. */
  tellOthers?(tenantId: string, ids: string[]): void;
  /** The buy a sync_creatives operation sent creatives to. */
  buyOfSync?(operationId: string): Promise<Pick<MediaBuyRow, 'id' | 'tenant_id'> | undefined>;
}

const CREATIVE_KINDS = new Set(['created', 'answered', 'input_requested']);

/** A change of a sync_creatives that changes its buy's creatives in the same commit. */
export function changesCreatives(row: Pick<OperationChange['operation'], 'type' | 'parent_id'>, events: OperationChange['events']): boolean {
  return row.type === 'sync_creatives' && row.parent_id !== null && events.some((e) => CREATIVE_KINDS.has(e.kind) || e.kind === 'transition');
}

export function buyChildWakes(deps: BuyChildWakeDeps): (change: OperationChange) => Promise<void> {
  return async (change) => {
    const creatives = deps.buyOfSync !== undefined && changesCreatives(change.operation, change.events);
    if (!creatives && !endsBuyChild(change.operation, change.events)) return;
    const buy = await (creatives ? deps.buyOfSync!(change.operation.id) : deps.buyOf(change.operation.parent_id!)).catch(() => undefined);
    if (!buy) return;
    deps.wakes.emit({ tenantId: buy.tenant_id, operationIds: [buy.id], many: false });
    deps.tellOthers?.(buy.tenant_id, [buy.id]);
  };
}
