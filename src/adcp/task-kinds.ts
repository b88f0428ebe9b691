/**
 * Which AdCP tasks change state at the seller and so require an `idempotency_key`,
 * and which can go async and notify. Both come from the spec's request schemas
 * as the pinned SDK knows them (see sdk-tables.ts).
 */
import { SDK_TABLES } from './sdk-tables.js';

const MUTATING: ReadonlySet<string> = new Set(SDK_TABLES.mutatingTasks);
const NOTIFYING: ReadonlySet<string> = new Set(SDK_TABLES.notifyingTasks);

export function requiresIdempotencyKey(task: string): boolean {
  return MUTATING.has(task);
}

/** Tasks whose request schema declares `push_notification_config` (they can go async and notify). */
export function acceptsPushNotifications(task: string): boolean {
  return NOTIFYING.has(task);
}
