/**
 * Status classification of raw replies (AdCP spec, task status): the statuses the SDK's
 * TaskExecutor would remap must come back exactly as the seller said them.
 */
import { describe, expect, it } from 'vitest';
import { classifyPayload } from '../../../src/adcp/classify.js';
import { taskReplyFromRaw } from '../../../src/adcp/raw-reply.js';
import { ADCP_TASK_STATUSES } from '../../../src/domain/status.js';

const mcp = (structuredContent: Record<string, unknown>, isError = false) =>
  taskReplyFromRaw({ protocol: 'mcp', result: { content: [], structuredContent, ...(isError ? { isError } : {}) } });

describe('classifyPayload', () => {
  it.each(ADCP_TASK_STATUSES.map((s) => [s]))('root status %s is reported unmapped', (status) => {
    expect(classifyPayload({ status }).status).toBe(status);
  });

  it.each([['pending_creatives'], ['pending_start'], ['active'], ['paused']])(
    '3.0 create_media_buy with MediaBuyStatus %s is a sync success',
    (status) => {
      expect(classifyPayload({ status, media_buy_id: 'mb_1', packages: [] }).status).toBe('completed');
    },
  );

  it('errors[] without media_buy_id is a failure carrying the first error', () => {
    const reply = classifyPayload({ errors: [{ code: 'BUDGET_TOO_LOW', message: 'too low', retry_after: 0.2 }] });
    expect(reply.status).toBe('failed');
    expect(reply.error).toEqual({ code: 'BUDGET_TOO_LOW', message: 'too low', recovery: 'correctable', retryAfterSeconds: 1 });
  });

  it('errors[] beside a media_buy_id are warnings on a created buy', () => {
    const reply = classifyPayload({ media_buy_id: 'mb_1', status: 'active', errors: [{ code: 'X_WARN' }] });
    expect(reply.status).toBe('completed');
    expect(reply.error?.code).toBe('X_WARN');
  });

  it('errors[] beside a sync_plans plans[] are the per-plan errors of a processed sync', () => {
    const reply = classifyPayload({ plans: [{ plan_id: 'p1', status: 'error', version: 0 }], errors: [{ code: 'INVALID_PLAN', details: { plan_id: 'p1' } }] });
    expect(reply.status).toBe('completed');
    expect(reply.error?.code).toBe('INVALID_PLAN');
  });

  it('reads the envelope fields', () => {
    const reply = classifyPayload({
      status: 'submitted',
      task_id: 'tsk_1',
      context_id: 'ctx_1',
      message: 'queued for review',
      timestamp: '2026-08-20T10:00:00Z',
      replayed: true,
    });
    expect(reply).toMatchObject({
      status: 'submitted',
      taskId: 'tsk_1',
      contextId: 'ctx_1',
      message: 'queued for review',
      timestamp: Date.parse('2026-08-20T10:00:00Z'),
      replayed: true,
    });
  });

  it('MCP isError fails the task even when the payload claims completed', () => {
    expect(mcp({ status: 'completed' }, true).status).toBe('failed');
    expect(mcp({ status: 'rejected', adcp_error: { code: 'POLICY_VIOLATION' } }, true).status).toBe('rejected');
    expect(mcp({ adcp_error: { code: 'RATE_LIMITED', retry_after: 86400 } }, true).error).toEqual({
      code: 'RATE_LIMITED',
      recovery: 'transient',
      retryAfterSeconds: 3600,
    });
  });

  it('auth-required and canceled come back as themselves, not completed/failed', () => {
    expect(mcp({ status: 'auth-required', message: 'refresh token' }).status).toBe('auth-required');
    expect(mcp({ status: 'canceled' }).status).toBe('canceled');
  });

  it('an update that canceled a buy completed: root `canceled` beside the buy is the buy status', () => {
    const reply = mcp({ media_buy_id: 'mb_1', status: 'canceled', revision: 3, affected_packages: [] });
    expect(reply.status).toBe('completed');
    // The same word with an error, or without a buy, is still the task's own.
    expect(mcp({ media_buy_id: 'mb_1', status: 'canceled', errors: [{ code: 'NOT_CANCELLABLE', message: 'no' }] }).status).toBe('canceled');
    expect(mcp({ status: 'canceled', task_id: 't1' }).status).toBe('canceled');
    expect(mcp({ media_buy_id: 'mb_1', status: 'canceled' }, true).status).toBe('failed');
  });

  it('an A2A rejected Task is rejected, not failed', () => {
    const reply = taskReplyFromRaw({
      protocol: 'a2a',
      result: { kind: 'task', id: 't', status: { state: 'rejected' }, artifacts: [{ parts: [{ kind: 'data', data: { errors: [{ code: 'POLICY_VIOLATION', recovery: 'permanent' }] } }] }] },
    });
    expect(reply.status).toBe('rejected');
    // An unknown recovery value is terminal, not the code table's correctable.
    expect(reply.error).toEqual({ code: 'POLICY_VIOLATION', recovery: 'terminal' });
  });
});
