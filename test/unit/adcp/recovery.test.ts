/**
 * How an AdCP error's recovery is classified (src/adcp/recovery.ts, error-handling.mdx):
 * an explicit known `recovery` always wins, an unknown `recovery` value is terminal, a known
 * code without one keeps the spec's recovery (the SDK's 3.0 table, then the 3.1/3.2 error-code
 * enums we ship), and an unknown code without one is transient, retried within the budget
 * only. Also what a send does with it (isRetryableSendFailure) and what its spent budget
 * writes (retriesSpentPlan).
 */
import { describe, expect, it } from 'vitest';
import { toAdcpError } from '../../../src/adcp/extract-error.js';
import { recoveryForCode, resolveRecovery, retriedWithinBudgetOnly } from '../../../src/adcp/recovery.js';
import { AdcpTransportError } from '../../../src/adcp/types.js';
import { isRetryableSendFailure } from '../../../src/engine/call-outcomes.js';
import { retriesSpentPlan } from '../../../src/engine/work-plans.js';
import { newOperationRow } from '../../../src/store/operation-row.js';

describe('resolveRecovery', () => {
  it('an unknown code without recovery is transient', () => {
    expect(resolveRecovery('X_VENDOR_UNKNOWN', undefined)).toBe('transient');
    expect(resolveRecovery('X_VENDOR_UNKNOWN', null)).toBe('transient');
    expect(toAdcpError({ code: 'GO_FOREVER', message: 'm' })).toEqual({ code: 'GO_FOREVER', message: 'm', recovery: 'transient' });
  });

  it('a known code without recovery keeps the recovery the spec gives it', () => {
    // The SDK's (AdCP 3.0.6) table.
    expect(resolveRecovery('INVALID_REQUEST', undefined)).toBe('correctable');
    expect(resolveRecovery('RATE_LIMITED', undefined)).toBe('transient');
    expect(resolveRecovery('ACCOUNT_SUSPENDED', undefined)).toBe('terminal');
    // Codes the SDK's table lacks, from the AdCP 3.1 and 3.2 error-code enums.
    expect(resolveRecovery('AGENT_SUSPENDED', undefined)).toBe('terminal');
    expect(resolveRecovery('SCOPE_INSUFFICIENT', undefined)).toBe('correctable');
    expect(resolveRecovery('IDEMPOTENCY_IN_FLIGHT', undefined)).toBe('transient');
    expect(resolveRecovery('ACCOUNT_MOVED', undefined)).toBe('correctable');
    expect(resolveRecovery('SIGNED_RESPONSE_ENVELOPE_EXPIRED', undefined)).toBe('transient');
  });

  it('an explicit known recovery always wins, over the table and over the default', () => {
    expect(resolveRecovery('INVALID_REQUEST', 'transient')).toBe('transient');
    expect(resolveRecovery('RATE_LIMITED', 'terminal')).toBe('terminal');
    expect(resolveRecovery('X_VENDOR_UNKNOWN', 'correctable')).toBe('correctable');
    expect(resolveRecovery('X_VENDOR_UNKNOWN', 'terminal')).toBe('terminal');
  });

  it('an unknown recovery value stays terminal, whatever the code', () => {
    expect(resolveRecovery('X_VENDOR_UNKNOWN', 'deferred')).toBe('terminal');
    expect(resolveRecovery('RATE_LIMITED', 'later')).toBe('terminal');
    expect(resolveRecovery('X_VENDOR_UNKNOWN', 42)).toBe('terminal');
  });

  it('recoveryForCode knows the standard codes only', () => {
    expect(recoveryForCode('INVALID_REQUEST')).toBe('correctable');
    expect(recoveryForCode('X_VENDOR_UNKNOWN')).toBeUndefined();
    expect(recoveryForCode('$comment')).toBeUndefined();
  });
});

describe('retriedWithinBudgetOnly', () => {
  it('is a transient error whose code we do not know, its recovery defaulted or given', () => {
    expect(retriedWithinBudgetOnly(toAdcpError({ code: 'X_VENDOR_UNKNOWN' }))).toBe(true);
    // The spec's GO_FOREVER: a sender's explicit transient on a code we cannot judge is bounded too.
    expect(retriedWithinBudgetOnly(toAdcpError({ code: 'GO_FOREVER', recovery: 'transient' }))).toBe(true);
  });

  it('is not a known transient code (those keep the give-up path), nor any error that is not transient', () => {
    expect(retriedWithinBudgetOnly(toAdcpError({ code: 'RATE_LIMITED' }))).toBe(false);
    expect(retriedWithinBudgetOnly(toAdcpError({ code: 'X_VENDOR_UNKNOWN', recovery: 'correctable' }))).toBe(false);
    expect(retriedWithinBudgetOnly(toAdcpError({ code: 'INVALID_REQUEST' }))).toBe(false);
    // Our own errors without a recovery (NO_DECISION, HTTP_502, ...) are not the seller's code.
    expect(retriedWithinBudgetOnly({ code: 'NO_DECISION' })).toBe(false);
    expect(retriedWithinBudgetOnly(undefined)).toBe(false);
  });
});

describe('isRetryableSendFailure', () => {
  const refused = (wire: { code: string; recovery?: string }) => new AdcpTransportError('refused', 'rpc', undefined, toAdcpError(wire), -32600);

  it('resends an unknown code without recovery (bounded by the caller), not a known correctable one', () => {
    expect(isRetryableSendFailure(refused({ code: 'X_VENDOR_UNKNOWN' }))).toBe(true);
    expect(isRetryableSendFailure(refused({ code: 'INVALID_REQUEST' }))).toBe(false);
    expect(isRetryableSendFailure(refused({ code: 'X_VENDOR_UNKNOWN', recovery: 'deferred' }))).toBe(false);
    expect(isRetryableSendFailure(refused({ code: 'X_VENDOR_UNKNOWN', recovery: 'terminal' }))).toBe(false);
  });
});

describe('retriesSpentPlan', () => {
  const t0 = Date.parse('2026-09-01T10:00:00Z');
  const sending = newOperationRow(
    { id: 'op_1', tenant_id: 't', agent_id: 'a', type: 'create_media_buy', idempotency_key: 'key_0123456789abcdef', request_body: '{}', created_at: t0 },
    { status: 'calling_adcp', check_kind: 'send', next_check_at: t0 + 1_000, attempt: 3 },
  );
  const error = toAdcpError({ code: 'X_VENDOR_UNKNOWN', message: 'vendor trouble' });

  it('leaves the send unknown, stalled for a person with the seller\'s error, and nothing due', () => {
    const plan = retriesSpentPlan(sending, error, 3, t0 + 5_000);
    const patch = plan.patch!;
    expect(patch).toMatchObject({ status: 'unknown', status_since: t0 + 5_000, stalled: 1, next_check_at: null, check_kind: null, attempt: 0 });
    expect(JSON.parse(patch.error as string)).toEqual(error);
    expect(patch.stalled_reason).toMatch(/X_VENDOR_UNKNOWN \(vendor trouble\), an error code we do not know, on each of 3 tries/);
    expect(plan.events!.map((e) => e.kind)).toEqual(['send_failed', 'transition', 'stalled']);
    expect(plan.events![0]!.detail).toEqual({ error, retry_budget_spent: true });
  });

  it('says nothing twice to a row already stalled, and never moves a terminal status', () => {
    expect(retriesSpentPlan({ ...sending, stalled: 1 }, error, 3, t0).events!.map((e) => e.kind)).toEqual(['send_failed', 'transition']);
    expect(retriesSpentPlan({ ...sending, status: 'failed' }, error, 3, t0).patch!.status).toBe('failed');
  });
});
