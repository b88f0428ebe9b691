/**
 * How to recover from an AdCP error: the seller's `recovery` when it is a known
 * value (an unknown value is `terminal`), else the standard table for the code,
 * else `transient`, retried only within the retry budget (see resolveRecovery).
 *
 * Why not the SDK's `resolveRecovery`: it falls back to the code table when the
 * seller sent an *unknown* recovery value (the spec says unknown values are
 * terminal: vector `unknown-recovery-value`), and its table is AdCP 3.0.6, which
 * lacks codes newer sellers send (ACCOUNT_MOVED, IDEMPOTENCY_IN_FLIGHT, ...).
 * We still take the SDK's table as the base so new 3.0.x codes come with SDK bumps,
 * and the newer codes from the AdCP 3.1 and 3.2 error-code enums we ship.
 */
import { readFileSync } from 'node:fs';
import { SDK_TABLES } from './sdk-tables.js';
import { isSignatureRefusalCode } from './signature-refusal.js';
import type { ErrorRecovery } from './types.js';

const RECOVERIES: readonly string[] = ['transient', 'correctable', 'terminal'];

/**
 * The standard codes of AdCP 3.1 and 3.2 with their recovery, from `enums/error-code.json`'s
 * `enumMetadata` in the schema data we ship (schemas/data, its README says from where; the
 * spec: "SDKs MUST consume this block"). Read once, when first asked.
 */
let specCodes: Map<string, ErrorRecovery> | undefined;

function specRecovery(code: string): ErrorRecovery | undefined {
  if (!specCodes) {
    specCodes = new Map();
    for (const release of ['3.1.19', '3.2.0-beta.5']) {
      const file = new URL(`./schemas/data/${release}/enums/error-code.json`, import.meta.url);
      const metadata = (JSON.parse(readFileSync(file, 'utf8')) as { enumMetadata?: Record<string, { recovery?: unknown }> }).enumMetadata ?? {};
      for (const [name, meta] of Object.entries(metadata)) {
        if (!specCodes.has(name) && isErrorRecovery(meta?.recovery)) specCodes.set(name, meta.recovery);
      }
    }
  }
  return specCodes.get(code);
}

export function isErrorRecovery(value: unknown): value is ErrorRecovery {
  return typeof value === 'string' && RECOVERIES.includes(value);
}

/** Recovery the standard tables give a code, or undefined for a code we do not know (a vendor's, or a later release's). */
export function recoveryForCode(code: string): ErrorRecovery | undefined {
  // The transport taxonomy's request-signature codes are not in the error-code enum: retrying
  // the same request cannot make its signature pass (signature-refusal.ts).
  if (isSignatureRefusalCode(code)) return 'terminal';
  const standard = SDK_TABLES.errorRecovery[code];
  if (isErrorRecovery(standard)) return standard;
  return specRecovery(code);
}

/**
 * Resolve the recovery class of an error.
 *
 * An unknown code without `recovery` is `transient`: error-handling.mdx (3.1,
 * "Forward-compatible decoding (normative)") says receivers MUST default it so, the
 * manifest's `error_code_policy.default_unknown_recovery` is `transient`, and the
 * default is bounded by the retry budget. (transport-errors.mdx and the
 * `mcp-missing-recovery-unknown-code` vector still say `terminal`; the normative
 * section wins.) The engine keeps the bound: see `retriedWithinBudgetOnly`.
 */
export function resolveRecovery(code: string, sellerRecovery: unknown): ErrorRecovery {
  if (sellerRecovery !== undefined && sellerRecovery !== null) {
    return isErrorRecovery(sellerRecovery) ? sellerRecovery : 'terminal';
  }
  return recoveryForCode(code) ?? 'transient';
}

/**
 * A transient error whose code we do not know (its recovery defaulted, or given by the
 * seller for a code we cannot judge): retried only within ADCP_ORCH_RETRY_ATTEMPTS, then
 * left to a person, never tried on at the slow stalled pace. error-handling.mdx: the
 * `transient` default "MUST NOT loop indefinitely", and a sender emitting
 * `code=GO_FOREVER, recovery=transient` "cannot induce unbounded retries".
 */
export function retriedWithinBudgetOnly(error: { code: string; recovery?: ErrorRecovery } | undefined): boolean {
  return error?.recovery === 'transient' && recoveryForCode(error.code) === undefined;
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
