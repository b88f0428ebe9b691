/**
 * A live media buy's status (the AdCP spec, media buy status) and which
 * status changes people are told about. Pure.
 *
 * Non-terminal: `pending_creatives`, `pending_start`, `active`, `paused`;
 * terminal: `completed`, `rejected` (only from the pending states), `canceled`.
 * The seller decides the status; we read it (`get_media_buys`, the create reply,
 * a delivery report's row) and only record what it says.
 */
import { CREATIVE_EVENT_NOTIFICATIONS, type CreativeNotificationType } from './creatives.js';

export const MEDIA_BUY_STATUSES = ['pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'rejected', 'canceled'] as const;
export type MediaBuyStatus = (typeof MEDIA_BUY_STATUSES)[number];

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'rejected', 'canceled']);

export function isMediaBuyStatus(value: unknown): value is MediaBuyStatus {
  return typeof value === 'string' && (MEDIA_BUY_STATUSES as readonly string[]).includes(value);
}

export function isTerminalBuyStatus(status: string): boolean {
  return TERMINAL.has(status);
}

/** The notifications about live media buys (README, Notifications), each with `data.media_buy`. */
export const MEDIA_BUY_NOTIFICATION_TYPES = [
  'media_buy.created',
  'media_buy.activated',
  'media_buy.paused',
  'media_buy.resumed',
  'media_buy.completed',
  'media_buy.canceled',
  'media_buy.rejected',
  'media_buy.creatives_needed',
  'media_buy.underpacing',
  'media_buy.overpacing',
  'media_buy.report_missing',
  'media_buy.governance_findings',
  'media_buy.unreadable',
  'media_buy.readable',
] as const;
export type MediaBuyNotificationType = (typeof MEDIA_BUY_NOTIFICATION_TYPES)[number];

/**
 * What a status change raises. `from` is null for the buy's first status (its
 * creation raises `media_buy.created` of its own; a buy born waiting for creatives
 * also raises `creatives_needed`, since that is what someone must act on).
 */
export function statusNotification(from: string | null, to: string): MediaBuyNotificationType | null {
  if (from === to) return null;
  switch (to) {
    case 'pending_creatives':
      return 'media_buy.creatives_needed';
    case 'active':
      return from === 'paused' ? 'media_buy.resumed' : 'media_buy.activated';
    case 'paused':
      return 'media_buy.paused';
    case 'completed':
      return 'media_buy.completed';
    case 'canceled':
      return 'media_buy.canceled';
    case 'rejected':
      return 'media_buy.rejected';
    default:
      return null;
  }
}

/**
 * The notification a buy event raises, if any: status changes by the rule above,
 * the buy's own alerts (`pacing_alert`, `report_missing`, `governance_findings`),
 * the seller ceasing and resuming to answer for it (`status_unreadable`,
 * `status_readable`: src/domain/media-buy-unreadable.ts), and its creatives' reviews (`creative_approved`, `creative_rejected`,
 * `creative_stalled`: src/domain/creatives.ts).
 */
export function buyNotificationFor(event: { kind: string; from_status: string | null; to_status: string | null; detail?: unknown }): MediaBuyNotificationType | CreativeNotificationType | null {
  const creative = CREATIVE_EVENT_NOTIFICATIONS[event.kind];
  if (creative) return creative;
  switch (event.kind) {
    case 'created':
      return 'media_buy.created';
    case 'status_changed':
      return event.to_status ? statusNotification(event.from_status, event.to_status) : null;
    case 'pacing_alert': {
      const state = (event.detail as { state?: unknown } | undefined)?.state;
      return state === 'under' ? 'media_buy.underpacing' : state === 'over' ? 'media_buy.overpacing' : null;
    }
    case 'report_missing':
      return 'media_buy.report_missing';
    case 'governance_findings':
      return 'media_buy.governance_findings';
    case 'status_unreadable':
      return 'media_buy.unreadable';
    case 'status_readable':
      return 'media_buy.readable';
    default:
      return null;
  }
}
