/**
 * Which AdCP tasks change state at the seller and so require an `idempotency_key`.
 * The SDK derives the set from the spec's request schemas; we only ask it.
 */
import { isMutatingTask, TOOL_REQUEST_SCHEMAS } from '@adcp/sdk';

export function requiresIdempotencyKey(task: string): boolean {
  return isMutatingTask(task);
}

/** Tasks whose request schema declares `push_notification_config` (they can go async and notify). */
const NOTIFYING_TASKS: ReadonlySet<string> = new Set(
  Object.entries(TOOL_REQUEST_SCHEMAS as Record<string, { shape?: Record<string, unknown> } | undefined>)
    .filter(([, schema]) => schema?.shape?.push_notification_config !== undefined)
    .map(([name]) => name),
);

export function acceptsPushNotifications(task: string): boolean {
  return NOTIFYING_TASKS.has(task);
}
