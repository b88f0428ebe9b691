/**
 * A notification body carries a bounded copy of the operation: fields up to
 * SUMMARY_FIELD_MAX_BYTES as the API shows them, larger ones (request, result, error,
 * the seller's message, the event's detail) as `$omitted` markers with their size and
 * the operation's API route, so a many-megabyte reply is never copied into the outbox.
 */
import { describe, expect, it } from 'vitest';
import { notificationBody, type BodyOperationSource } from '../../../src/domain/notification-body.js';
import { presentOperation, SUMMARY_FIELD_MAX_BYTES, type EventJsonSource } from '../../../src/domain/operation-json.js';

const bigProducts = (bytes: number) => ({ products: Array.from({ length: Math.ceil(bytes / 40) }, (_, i) => ({ product_id: `p_${i}`, name: 'ünïcödé ✓' })) });

function row(over: Partial<BodyOperationSource> = {}): BodyOperationSource {
  return {
    id: 'op/1',
    type: 'get_products',
    agent_id: 'ag_1',
    status: 'completed',
    task_id: null,
    context_id: null,
    idempotency_key: 'k',
    request_body: JSON.stringify({ brief: 'small' }),
    result: JSON.stringify({ products: [{ product_id: 'p_1' }] }),
    error: null,
    needs_input: 0,
    input_message: null,
    stalled: 0,
    stalled_reason: null,
    webhook_mode: 'none',
    deadline_at: null,
    next_check_at: null,
    created_at: 1,
    updated_at: 2,
    completed_at: 2,
    parent_id: null,
    ...over,
  };
}

const event = (detail: unknown = null): EventJsonSource => ({ id: 7, at: 2, source: 'call', kind: 'transition', from_status: 'calling_adcp', to_status: 'completed', detail: detail === null ? null : JSON.stringify(detail), actor: null });

function body(source: BodyOperationSource, ev = event()) {
  const operation = presentOperation(source, undefined, { maxFieldBytes: SUMMARY_FIELD_MAX_BYTES });
  return notificationBody({ id: 'ntf_1', type: 'operation.completed', tenantId: 't', createdAt: 2, operation, event: ev }, source);
}

describe('notification bodies are bounded', () => {
  it('keep small fields exactly as the API shows them', () => {
    const source = row();
    expect(body(source).data.operation).toEqual(presentOperation(source));
  });

  it('replace a large result, request, error and message by a marker with the size and the route, never parsing them', () => {
    const result = JSON.stringify(bigProducts(SUMMARY_FIELD_MAX_BYTES * 4));
    const request = JSON.stringify({ brief: 'x'.repeat(SUMMARY_FIELD_MAX_BYTES + 1) });
    const error = JSON.stringify({ code: 'X', message: 'y'.repeat(SUMMARY_FIELD_MAX_BYTES + 1) });
    const message = 'z'.repeat(SUMMARY_FIELD_MAX_BYTES + 1);
    const b = body(row({ result, request_body: request, error, input_message: message }));
    const href = '/v1/operations/op%2F1';
    expect(b.data.operation.result).toEqual({ $omitted: { bytes: Buffer.byteLength(result), href } });
    expect(b.data.operation.request).toEqual({ $omitted: { bytes: Buffer.byteLength(request), href } });
    expect(b.data.operation.error).toEqual({ $omitted: { bytes: Buffer.byteLength(error), href } });
    expect(b.data.operation.input_message).toEqual({ $omitted: { bytes: message.length, href } });
    expect(JSON.stringify(b).length).toBeLessThan(2_000);
  });

  it('counts bytes, not characters: text just under the limit in characters but over it in UTF-8 is omitted', () => {
    const result = JSON.stringify({ note: 'é'.repeat(SUMMARY_FIELD_MAX_BYTES / 2 + 10) });
    expect(result.length).toBeLessThan(SUMMARY_FIELD_MAX_BYTES);
    expect(body(row({ result })).data.operation.result).toEqual({ $omitted: { bytes: Buffer.byteLength(result), href: '/v1/operations/op%2F1' } });
  });

  it("replace a large event detail, and still name a large completed buy's media_buy_id", () => {
    const result = JSON.stringify({ media_buy_id: 'mb_42', packages: bigProducts(SUMMARY_FIELD_MAX_BYTES * 2).products });
    const b = body(row({ type: 'create_media_buy', result }), event({ message: 'm'.repeat(SUMMARY_FIELD_MAX_BYTES + 1) }));
    expect(b.data.event.detail).toMatchObject({ $omitted: { href: '/v1/operations/op%2F1' } });
    expect(b.data.operation.result).toMatchObject({ $omitted: {} });
    expect(b.data).toMatchObject({ media_buy_id: 'mb_42' });
  });
});
