/**
 * At-most-once execution of mutating calls, as a real seller does it.
 *
 * Hashing and storage come from the SDK's idempotency store (RFC 8785 JCS +
 * SHA-256 over the payload minus `idempotency_key`, object `context`,
 * `governance_context` and the webhook credential, per the spec's closed
 * exclusion list). We drive it ourselves rather than through
 * createAdcpServer's handler pipeline because the sandbox's create_media_buy
 * answers with statuses that pipeline doesn't model (working, input-required,
 * auth-required, rejected) and must count every call, replays included.
 */
import { createIdempotencyStore, memoryBackend, type IdempotencyStore } from '@adcp/sdk/server';
import { cloneResult, errorResult, withBody, type ToolResult } from './wire.js';

export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_.:-]{16,255}$/;
export const REPLAY_TTL_SECONDS = 86_400;

/**
 * What a seller declares of its replay protection (`adcp.idempotency` in its
 * capabilities), and keeps to: a window of `replay_ttl_seconds`, or none at all.
 */
export type ReplayDeclaration = { supported: true; replay_ttl_seconds: number } | { supported: false };

export type IdempotentOutcome = 'fresh' | 'replay' | 'conflict' | 'expired' | 'in-flight';

export class IdempotencyLedger {
  /** None when the seller declares no replay protection: it must not replay what it said it would not. */
  private readonly store: IdempotencyStore | undefined;

  constructor(declared: ReplayDeclaration = { supported: true, replay_ttl_seconds: REPLAY_TTL_SECONDS }) {
    this.store = declared.supported
      ? createIdempotencyStore({ backend: memoryBackend(), ttlSeconds: declared.replay_ttl_seconds })
      : undefined;
  }

  /**
   * Run `execute` once per (principal, key). A later call with the same
   * canonical payload gets the first reply back with `replayed: true` (an
   * async reply therefore repeats its `task_id`); a different payload gets
   * IDEMPOTENCY_CONFLICT. Error replies are never cached, so a retry after
   * an error runs again, as the spec requires.
   */
  async run(
    principal: string,
    key: string,
    payload: Record<string, unknown>,
    execute: () => Promise<ToolResult>,
  ): Promise<{ outcome: IdempotentOutcome; result: ToolResult }> {
    // `idempotency.supported: false`: every call runs, a resend included (the spec: "a naive retry WILL double-process").
    if (!this.store) return { outcome: 'fresh', result: await execute() };
    const check = await this.store.check({ principal, key, payload });
    switch (check.kind) {
      case 'replay': {
        const cached = cloneResult(check.response as ToolResult);
        const body: Record<string, unknown> = { ...cached.structuredContent, replayed: true };
        // `context` is excluded from the hash, so echo this call's, not the first one's.
        if (payload.context !== undefined) body.context = payload.context;
        else delete body.context;
        return { outcome: 'replay', result: withBody(cached, body) };
      }
      case 'conflict':
        return {
          outcome: 'conflict',
          result: errorResult(
            'IDEMPOTENCY_CONFLICT',
            'idempotency_key was already used with a different payload; use a new key for a new request',
          ),
        };
      case 'expired':
        return {
          outcome: 'expired',
          result: errorResult('IDEMPOTENCY_EXPIRED', 'idempotency_key is past the replay window'),
        };
      case 'in-flight':
        // 3.0 has no IDEMPOTENCY_IN_FLIGHT; SERVICE_UNAVAILABLE + retry_after is transient.
        return {
          outcome: 'in-flight',
          result: errorResult('SERVICE_UNAVAILABLE', 'a request with this idempotency_key is still executing', {
            retry_after: 1,
          }),
        };
      case 'miss':
        break;
    }
    let result: ToolResult;
    try {
      result = await execute();
    } catch (err) {
      await this.store.release({ principal, key });
      throw err;
    }
    if (result.isError) {
      await this.store.release({ principal, key });
    } else {
      await this.store.save({ principal, key, payloadHash: check.payloadHash, response: cloneResult(result) });
    }
    return { outcome: 'fresh', result };
  }
}
