/** validateTaskResult: a terminal result against the pinned SDK's response schema of the task. */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { SDK_TABLES } from '../../../src/adcp/sdk-tables.js';
import { hasResultSchema, validateTaskResult } from '../../../src/adcp/task-result.js';
import { loadVectors } from './vectors.js';

const extraction = { vectors: loadVectors<{ id: string; payload: Record<string, any>; expected_data: Record<string, unknown> | null }>('webhook-payload-extraction.json') };

describe('validateTaskResult', () => {
  it('accepts a create_media_buy success, including a MediaBuyStatus in its own status (3.0)', () => {
    expect(validateTaskResult('create_media_buy', { media_buy_id: 'mb', packages: [] })).toEqual({ ok: true });
    expect(validateTaskResult('create_media_buy', { media_buy_id: 'mb', status: 'pending_creatives', packages: [{ package_id: 'p' }] })).toEqual({ ok: true });
  });

  it('refuses what is not a create_media_buy response, saying where', () => {
    const missing = validateTaskResult('create_media_buy', { media_buy_id: 'mb' });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.issues.map((i) => i.path)).toContain('/packages');
    const nested = validateTaskResult('create_media_buy', { media_buy_id: 'mb', packages: [{}] });
    expect(nested.ok).toBe(false);
    if (!nested.ok) expect(nested.issues.map((i) => i.path)).toContain('/packages/0/package_id');
    const report = validateTaskResult('create_media_buy', { notification_type: 'scheduled', media_buy_deliveries: [] });
    expect(report.ok).toBe(false);
    if (!report.ok) expect(report.issues.length).toBeLessThanOrEqual(12);
  });

  it('failed/canceled/rejected: the task error shape or a core adcp_error', () => {
    for (const status of ['failed', 'canceled', 'rejected'] as const) {
      expect(validateTaskResult('create_media_buy', { errors: [{ code: 'X', message: 'y' }] }, status)).toEqual({ ok: true });
      expect(validateTaskResult('create_media_buy', { adcp_error: { code: 'X', message: 'y' } }, status)).toEqual({ ok: true });
      const bad = validateTaskResult('create_media_buy', { adcp_error: { code: 'X' } }, status);
      expect(bad.ok).toBe(false);
      if (!bad.ok) expect(bad.issues[0].path).toBe('/adcp_error');
    }
    // A completed result gets no such allowance.
    expect(validateTaskResult('create_media_buy', { adcp_error: { code: 'X', message: 'y' } }, 'completed').ok).toBe(false);
  });

  it('leaves interim data alone, and accepts tasks the SDK has no response schema for', () => {
    for (const status of ['submitted', 'working', 'input-required', 'auth-required', 'unknown'] as const) {
      expect(validateTaskResult('create_media_buy', { anything: true }, status)).toEqual({ ok: true });
    }
    expect(hasResultSchema('media_buy_delivery')).toBe(false);
    expect(validateTaskResult('media_buy_delivery', { notification_type: 'scheduled' })).toEqual({ ok: true });
  });

  it("accepts every terminal result in the spec's extraction vectors for the task each names (create_media_buy when none)", () => {
    const terminal = extraction.vectors.filter((v) => v.expected_data && ['completed', 'failed'].includes(v.payload.status?.state ?? v.payload.status));
    expect(terminal.length).toBeGreaterThanOrEqual(4);
    for (const v of terminal) {
      const status = v.payload.status?.state ?? v.payload.status;
      expect(validateTaskResult(v.payload.task_type ?? 'create_media_buy', v.expected_data!, status), v.id).toEqual({ ok: true });
    }
  });

  it('every task in the generated table names a schema @adcp/sdk/schemas exports (an SDK upgrade cannot silently switch checks off)', () => {
    const mod = createRequire(import.meta.url)('@adcp/sdk/schemas') as Record<string, { safeParse?: unknown }>;
    expect(Object.keys(SDK_TABLES.responseSchemas)).toEqual(expect.arrayContaining(['create_media_buy', 'update_media_buy', 'sync_plans', 'check_governance']));
    for (const [task, name] of Object.entries(SDK_TABLES.responseSchemas)) expect(typeof mod[name]?.safeParse, `${task} → ${name}`).toBe('function');
  });
});
