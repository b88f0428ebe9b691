/**
 * The sandbox seller's `update_media_buy`, limited to what buyers need from it
 * in tests and demos, idempotent by key like every mutation:
 *
 * - `canceled: true` (+ `cancellation_reason`): ends the buy (NOT_CANCELLABLE
 *   once it is canceled or completed); its final report follows.
 * - `paused: true|false`: pauses or resumes an active/paused buy; a pending
 *   or ended one is INVALID_STATE. Asking for the state it is in changes
 *   nothing (no new revision).
 * - `packages[]: {package_id, paused}`: the same per package (PACKAGE_NOT_FOUND).
 * - `reporting_webhook`: where reports go from now on (its sequence goes on).
 * - `revision`: must be the buy's current one, else CONFLICT.
 *
 * Other changes (budgets, flights, creatives, new packages) are refused as
 * UNSUPPORTED_FEATURE rather than pretended.
 */
import { validActionsForStatus } from '@adcp/sdk/server';
import type { IdempotencyLedger } from './idempotency.js';
import { IDEMPOTENCY_KEY_PATTERN } from './idempotency.js';
import type { LiveBuys } from './live-buys.js';
import { isTerminalBuyStatus, sameAccount, type BookedMediaBuy } from './media-buy-book.js';
import { checkReportingWebhook } from './reporting-webhook.js';
import { assertValidAdcpReply } from './sdk-validator.js';
import { errorResult, isPlainObject, ok, type ToolResult } from './wire.js';

const SUPPORTED_FIELDS = new Set([
  'idempotency_key',
  'account',
  'media_buy_id',
  'revision',
  'paused',
  'packages',
  'canceled',
  'cancellation_reason',
  'reporting_webhook',
  'context',
  'push_notification_config',
  // The version envelope (a buyer's pin), not a change to the buy.
  'adcp_major_version',
  'adcp_version',
]);

/** Who asks, as history entries name them. */
const BUYER_ACTOR = 'buyer';

export async function updateMediaBuy(live: LiveBuys, ledger: IdempotencyLedger, args: Record<string, unknown>, principal: string): Promise<ToolResult> {
  const echo = args.context !== undefined ? { context: args.context } : {};
  const fail = (code: string, message: string, field?: string): ToolResult =>
    errorResult(code, message, { recovery: 'correctable', ...(field && { field }), extra: echo });
  const key = args.idempotency_key;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    return fail('INVALID_REQUEST', 'idempotency_key is required and must match ^[A-Za-z0-9_.:-]{16,255}$', 'idempotency_key');
  }
  if (typeof args.media_buy_id !== 'string' || args.media_buy_id === '') return fail('INVALID_REQUEST', 'media_buy_id is required', 'media_buy_id');
  const unsupported = Object.keys(args).filter((k) => !SUPPORTED_FIELDS.has(k));
  const packages = packagePauses(args.packages);
  if (unsupported.length > 0 || typeof packages === 'string') {
    const what = typeof packages === 'string' ? packages : `got ${unsupported.join(', ')}`;
    return fail('UNSUPPORTED_FEATURE', `sandbox: update_media_buy supports canceled, paused, packages[].paused and reporting_webhook only (${what})`);
  }
  if (args.canceled !== undefined && args.canceled !== true) return fail('INVALID_REQUEST', 'canceled can only be true', 'canceled');
  if (args.paused !== undefined && typeof args.paused !== 'boolean') return fail('INVALID_REQUEST', 'paused must be a boolean', 'paused');
  if (args.canceled === true && (args.paused !== undefined || packages.length > 0)) {
    return fail('INVALID_REQUEST', 'a cancellation cannot be combined with pausing or resuming', 'canceled');
  }
  if (args.revision !== undefined && (!Number.isInteger(args.revision) || (args.revision as number) < 1)) {
    return fail('INVALID_REQUEST', 'revision must be a positive integer', 'revision');
  }
  const webhook = checkReportingWebhook(args.reporting_webhook);
  if (webhook && 'code' in webhook) return fail(webhook.code, webhook.message, webhook.field);
  if (args.canceled === undefined && args.paused === undefined && packages.length === 0 && !webhook) {
    return fail('INVALID_REQUEST', 'nothing to update: give canceled, paused, packages[].paused or reporting_webhook');
  }

  const mediaBuyId = args.media_buy_id;
  const { result } = await ledger.run(principal, key, args, async () => {
    const buy = live.book.find(mediaBuyId);
    if (!buy || !sameAccount(args.account, buy)) return fail('MEDIA_BUY_NOT_FOUND', `no media buy ${mediaBuyId}`, 'media_buy_id');
    if (args.revision !== undefined && args.revision !== buy.revision) {
      return fail('CONFLICT', `media buy ${mediaBuyId} is at revision ${buy.revision}, not ${String(args.revision)}; read it again with get_media_buys`, 'revision');
    }
    if (args.canceled === true) {
      if (isTerminalBuyStatus(buy.status)) return fail('NOT_CANCELLABLE', `media buy ${mediaBuyId} is already ${buy.status}`);
      if (webhook) live.setReportingWebhook(buy, webhook, BUYER_ACTOR);
      // The final report goes out after this reply, on its own.
      live
        .end(buy, { status: 'canceled', by: 'buyer', actor: BUYER_ACTOR, ...(typeof args.cancellation_reason === 'string' && { reason: args.cancellation_reason }) })
        ?.catch((err: unknown) => console.error(`sandbox seller: the final report of media buy ${mediaBuyId} failed:`, err));
      return reply(buy, []);
    }
    const pausing = args.paused !== undefined || packages.length > 0;
    if (pausing && buy.status !== 'active' && buy.status !== 'paused') {
      return fail('INVALID_STATE', `media buy ${mediaBuyId} is ${buy.status}; only an active or paused buy can be paused or resumed`, args.paused !== undefined ? 'paused' : 'packages');
    }
    const unknown = packages.find((p) => !buy.packages.some((b) => b.package_id === p.package_id));
    if (unknown) return fail('PACKAGE_NOT_FOUND', `media buy ${mediaBuyId} has no package ${unknown.package_id}`, 'packages');
    if (webhook) live.setReportingWebhook(buy, webhook, BUYER_ACTOR);
    if (typeof args.paused === 'boolean') live.setPaused(buy, args.paused, BUYER_ACTOR);
    for (const p of packages) live.setPackagePaused(buy, p.package_id, p.paused, BUYER_ACTOR);
    return reply(buy, packages.map((p) => p.package_id));
  });
  return result;

  function reply(buy: BookedMediaBuy, affected: string[]): ToolResult {
    const body = {
      media_buy_id: buy.media_buy_id,
      // Includes `status: "canceled"` after a cancel, as the spec allows: the word is
      // also a task status, so buyers must read it as the buy's here (a real seller's trap).
      status: buy.status,
      revision: buy.revision,
      implementation_date: buy.updated_at,
      affected_packages: buy.packages.filter((p) => affected.includes(p.package_id)).map((p) => ({ package_id: p.package_id, paused: p.paused })),
      valid_actions: validActionsForStatus(buy.status),
      sandbox: true,
      ...echo,
    };
    assertValidAdcpReply('sandbox seller', 'update_media_buy', body);
    return ok(body);
  }
}

/** `packages[]` as {package_id, paused} pairs, or why the sandbox cannot do what it asks. */
function packagePauses(raw: unknown): Array<{ package_id: string; paused: boolean }> | string {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length === 0) return 'packages must be a non-empty array';
  const out: Array<{ package_id: string; paused: boolean }> = [];
  for (const p of raw) {
    if (!isPlainObject(p) || typeof p.package_id !== 'string' || typeof p.paused !== 'boolean') return 'each package needs package_id and paused';
    const extra = Object.keys(p).filter((k) => k !== 'package_id' && k !== 'paused');
    if (extra.length > 0) return `packages[] supports paused only, got ${extra.join(', ')}`;
    out.push({ package_id: p.package_id, paused: p.paused });
  }
  return out;
}
