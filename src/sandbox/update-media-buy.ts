/**
 * The sandbox seller's `update_media_buy`, limited to what buyers need from it
 * in tests and demos: canceling a buy it created (`canceled: true`, with an
 * optional `cancellation_reason`), idempotent by key like every mutation.
 * Other changes (budgets, flights, packages) are refused as unsupported rather
 * than pretended.
 */
import type { IdempotencyLedger } from './idempotency.js';
import { IDEMPOTENCY_KEY_PATTERN } from './idempotency.js';
import type { MediaBuyBook } from './media-buy-book.js';
import { errorResult, ok, type ToolResult } from './wire.js';

const SUPPORTED_FIELDS = new Set(['idempotency_key', 'account', 'media_buy_id', 'canceled', 'cancellation_reason', 'context', 'push_notification_config']);

export async function updateMediaBuy(book: MediaBuyBook, ledger: IdempotencyLedger, args: Record<string, unknown>, principal: string): Promise<ToolResult> {
  const echo = args.context !== undefined ? { context: args.context } : {};
  const key = args.idempotency_key;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    return errorResult('INVALID_REQUEST', 'idempotency_key is required and must match ^[A-Za-z0-9_.:-]{16,255}$', { field: 'idempotency_key', extra: echo });
  }
  if (typeof args.media_buy_id !== 'string' || args.media_buy_id === '') {
    return errorResult('INVALID_REQUEST', 'media_buy_id is required', { field: 'media_buy_id', extra: echo });
  }
  const unsupported = Object.keys(args).filter((k) => !SUPPORTED_FIELDS.has(k));
  if (args.canceled !== true || unsupported.length > 0) {
    return errorResult('UNSUPPORTED_FEATURE', `sandbox: update_media_buy supports only canceled: true${unsupported.length ? ` (got ${unsupported.join(', ')})` : ''}`, {
      recovery: 'correctable',
      extra: echo,
    });
  }
  const mediaBuyId = args.media_buy_id;
  const { result } = await ledger.run(principal, key, args, async () => {
    const buy = book.find(mediaBuyId);
    if (!buy) return errorResult('MEDIA_BUY_NOT_FOUND', `no media buy ${mediaBuyId}`, { recovery: 'correctable', field: 'media_buy_id', extra: echo });
    if (buy.status === 'canceled') return errorResult('NOT_CANCELLABLE', `media buy ${mediaBuyId} is already canceled`, { recovery: 'correctable', extra: echo });
    book.cancel(mediaBuyId, typeof args.cancellation_reason === 'string' ? args.cancellation_reason : undefined);
    return ok({ media_buy_id: mediaBuyId, implementation_date: new Date().toISOString(), affected_packages: [], ...echo });
  });
  return result;
}
