/**
 * The response check (src/adcp/response-schema.ts): a reply against its task's
 * response schema of a version, the async schema of its status where there is one,
 * the root relaxed as the SDK relaxes it and nothing below it.
 */
import { describe, expect, it } from 'vitest';
import { responseIssues, schemaErrors } from '../../../src/adcp/response-schema.js';
import { relaxedRoot } from '../../../src/adcp/schemas/compiled-validators.js';

const created = {
  media_buy_id: 'mb_1',
  confirmed_at: '2026-01-01T00:00:00Z',
  revision: 1,
  packages: [{ package_id: 'pkg_1' }],
};

describe('responseIssues (3.1)', () => {
  it('takes a create answered completed with the buy status in media_buy_status', () => {
    expect(responseIssues('create_media_buy', { ...created, status: 'completed', media_buy_status: 'pending_creatives', adcp_version: '3.1' }, '3.1')).toEqual([]);
  });

  it('refuses the 3.0 shape (the buy status at the root is no task status) and a reply without the envelope status', () => {
    expect(responseIssues('create_media_buy', { ...created, status: 'pending_creatives' }, '3.1')).toContainEqual(expect.objectContaining({ pointer: '/status' }));
    expect(responseIssues('get_media_buys', { media_buys: [] }, '3.1')).toContainEqual(expect.objectContaining({ pointer: '/status' }));
  });

  it('checks a working reply against the async working schema, not the three shapes of the final one', () => {
    expect(responseIssues('create_media_buy', { status: 'working', task_id: 't1', percentage: 40 }, '3.1')).toEqual([]);
    expect(responseIssues('create_media_buy', { status: 'working', task_id: 't1', percentage: 140 }, '3.1')).toContainEqual(expect.objectContaining({ pointer: '/percentage' }));
  });

  it('knows no schema for a tool outside the spec', () => {
    expect(responseIssues('sandbox_respond', {}, '3.1')).toBeNull();
  });

  it('checks a document by its path: a 3.1 webhook payload needs its operation_id', () => {
    const payload = { idempotency_key: 'key_0123456789abcdef', task_id: 't1', task_type: 'create_media_buy', status: 'completed', timestamp: '2026-01-01T00:00:00Z' };
    expect(schemaErrors('core/mcp-webhook-payload.json', payload, '3.1')).not.toEqual([]);
    expect(schemaErrors('core/mcp-webhook-payload.json', { ...payload, operation_id: 'op_1' }, '3.1')).toEqual([]);
    expect(schemaErrors('core/no-such-schema.json', payload, '3.1')).toBeNull();
  });
});

describe('relaxedRoot', () => {
  it('opens the root and its unions’ branches, nothing deeper', () => {
    const inner = { type: 'object', additionalProperties: false };
    const relaxed = relaxedRoot({ additionalProperties: false, oneOf: [{ additionalProperties: false, properties: { a: inner } }], properties: { b: inner } });
    expect(relaxed.additionalProperties).toBe(true);
    expect((relaxed.oneOf as any[])[0].additionalProperties).toBe(true);
    expect((relaxed.oneOf as any[])[0].properties.a.additionalProperties).toBe(false);
    expect((relaxed.properties as any).b.additionalProperties).toBe(false);
  });
});
