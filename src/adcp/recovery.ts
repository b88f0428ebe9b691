/**
 * How to recover from an AdCP error: the seller's `recovery` when it is a known
 * value, else the standard table for the code, else `terminal`.
 *
 * Why not the SDK's `resolveRecovery`: it falls back to the code table when the
 * seller sent an *unknown* recovery value (the spec says unknown values are
 * terminal: vector `unknown-recovery-value`), and its table is AdCP 3.0.6, which
 * lacks codes newer sellers send (ACCOUNT_MOVED, IDEMPOTENCY_IN_FLIGHT, ...).
 * We still take the SDK's table as the base so new 3.0.x codes come with SDK bumps.
 */
import { SDK_TABLES } from './sdk-tables.js';
import type { ErrorRecovery } from './types.js';

const RECOVERIES: readonly string[] = ['transient', 'correctable', 'terminal'];

/**
 * Codes from AdCP 3.1+/3.2 (`enums/error-code.json`, `manifest.json`) that the
 * SDK's 3.0.6 table does not know yet.
 */
const NEWER_CODES: Readonly<Record<string, ErrorRecovery>> = {
  ACCOUNT_MOVED: 'correctable',
  ACCOUNT_IDENTITY_CONFLICT: 'correctable',
  AUTH_MISSING: 'correctable',
  AUTH_INVALID: 'terminal',
  IDEMPOTENCY_IN_FLIGHT: 'transient',
  CONFIGURATION_ERROR: 'terminal',
  CREDENTIAL_IN_ARGS: 'terminal',
};

export function isErrorRecovery(value: unknown): value is ErrorRecovery {
  return typeof value === 'string' && RECOVERIES.includes(value);
}

/** Recovery the standard tables give a code, or undefined for a vendor code. */
export function recoveryForCode(code: string): ErrorRecovery | undefined {
  const standard = SDK_TABLES.errorRecovery[code];
  if (isErrorRecovery(standard)) return standard;
  return NEWER_CODES[code];
}

/**
 * Resolve the recovery class of an error.
 *
 * An unknown code without `recovery` is `terminal`: transport-errors.mdx and the
 * `mcp-missing-recovery-unknown-code` vector say so, while error-handling.mdx and
 * the manifest's `default_unknown_recovery` say `transient` (AdCP spec, polling, timeouts, retries, reconciliation). We
 * pick the side that never auto-retries something we do not understand.
 */
export function resolveRecovery(code: string, sellerRecovery: unknown): ErrorRecovery {
  if (sellerRecovery !== undefined && sellerRecovery !== null) {
    return isErrorRecovery(sellerRecovery) ? sellerRecovery : 'terminal';
  }
  return recoveryForCode(code) ?? 'terminal';
}

/**
 * `retry_after` in whole seconds, 1..3600, rounded up: we must never retry
 * earlier than the seller asked, and an hour is the spec's ceiling.
 */
export function clampRetryAfter(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return undefined;
  return Math.min(3600, Math.max(1, Math.ceil(n)));
}
