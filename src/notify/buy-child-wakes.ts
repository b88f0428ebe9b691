/**
 * A live buy changed by one of its child operations (pause, resume, cancel, refresh:
 * src/engine/media-buys/buy-recorder.ts applies their end to the buy in the operation's
 * own commit): the operation's change names only the operation, so live readers of
 * the buy (the MCP resource, the buy's page) are told by the buy's id here, and other
 * instances through NOTIFY. The buy is found by the operation's parent (the buy's
 * create): one read per ended child of a buy, which is rare; a failed read costs live
 * readers only their next refresh.
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
}

export function buyChildWakes(deps: BuyChildWakeDeps): (change: OperationChange) => Promise<void> {
  return async (change) => {
    if (!endsBuyChild(change.operation, change.events)) return;
    const buy = await deps.buyOf(change.operation.parent_id!).catch(() => undefined);
    if (!buy) return;
    deps.wakes.emit({ tenantId: buy.tenant_id, operationIds: [buy.id], many: false });
    deps.tellOthers?.(buy.tenant_id, [buy.id]);
  };
}
