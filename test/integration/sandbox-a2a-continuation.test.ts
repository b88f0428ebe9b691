/**
 * The sandbox seller's A2A continuation, spoken to directly over JSON-RPC: an
 * input-required create_media_buy keeps its A2A task open; a follow-up on the same
 * taskId + contextId with a new messageId and the full valid input completes it.
 * Follow-ups that are not a verified continuation are refused, an invalid input
 * is asked again, and the same message twice is taken once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';

type Json = any;

describe('sandbox seller: A2A input-required continuation', () => {
  let seller: SandboxSeller;
  let rpcId = 0;

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 200, freshToken: 'fresh-token-abcdefgh' });
  });
  afterAll(async () => seller?.close());

  const send = async (message: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Json> => {
    const res = await fetch(seller.a2aUrl!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'message/send', params: { message: { kind: 'message', role: 'user', ...message } } }),
    });
    return res.json();
  };
  const invoke = (input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    ({ parts: [{ kind: 'data', data: { skill: 'create_media_buy', input } }], ...extra });
  const key = () => `key-${crypto.randomUUID()}`;
  const ask = async (productId: string) => {
    const input = { ...mediaBuyRequest(productId), idempotency_key: key() };
    const rpc = await send({ messageId: crypto.randomUUID(), ...invoke(input) });
    return { input, task: rpc.result as Json };
  };
  const dataOf = (task: Json) => (task.artifacts?.[0] ?? task.status.message).parts.find((p: Json) => p.kind === 'data').data;

  it('keeps the A2A task open in input-required, and a valid follow-up on it completes the buy', async () => {
    const { input, task } = await ask('sandbox_input_required');
    expect(task.kind).toBe('task');
    expect(task.status.state).toBe('input-required');
    const question = dataOf(task);
    expect(question).toMatchObject({ status: 'input-required', task_id: expect.stringMatching(/^task_/) });
    expect(seller.getTask(question.task_id)?.status).toBe('input-required');

    const messageId = crypto.randomUUID();
    const rpc = await send({
      messageId,
      taskId: task.id,
      contextId: task.contextId,
      parts: [{ kind: 'text', text: 'approved by finance' }, { kind: 'data', data: { skill: 'create_media_buy', input } }],
    });
    expect(rpc.error).toBeUndefined();
    expect(rpc.result).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: 'completed' } });
    const bought = dataOf(rpc.result);
    expect(bought.media_buy_id).toMatch(/^mb_/);
    expect(seller.getTask(question.task_id)?.status).toBe('completed');
    expect(seller.mediaBuys().filter((b) => b.media_buy_id === bought.media_buy_id)).toHaveLength(1);

    // The same message again (a buyer resending after a lost reply) is the same answer: no second buy.
    const again = await send({ messageId, taskId: task.id, contextId: task.contextId, ...invoke(input) });
    expect(again.result.status.state).toBe('completed');
    expect(seller.stats().mediaBuysCreatedByKey[input.idempotency_key as string]).toBe(1);
    expect(seller.stats().continuations.filter((c) => c.a2a_task_id === task.id).map((c) => c.outcome)).toEqual(['completed', 'duplicate']);

    // A new message on an ended task is refused.
    const late = await send({ messageId: crypto.randomUUID(), taskId: task.id, contextId: task.contextId, ...invoke(input) });
    expect(late.error.code).toBe(-32600);
  });

  it('refuses a follow-up that does not carry the task own contextId, and changes nothing', async () => {
    const { input, task } = await ask('sandbox_input_required');
    for (const contextId of ['another-context', undefined]) {
      const rpc = await send({ messageId: crypto.randomUUID(), taskId: task.id, ...(contextId ? { contextId } : {}), ...invoke(input) });
      expect(rpc.error?.code).toBe(-32602);
    }
    expect(seller.getTask(dataOf(task).task_id)?.status).toBe('input-required');
    const unknown = await send({ messageId: crypto.randomUUID(), taskId: 'no-such-task', contextId: task.contextId, ...invoke(input) });
    expect(unknown.error?.code).toBe(-32001);
  });

  it('asks again when the answer is not a valid request, and then takes a valid one (going on to submitted)', async () => {
    const { input, task } = await ask('sandbox_input_required');
    const { brand: _b, ...withoutBrand } = input;
    const invalid = await send({ messageId: crypto.randomUUID(), taskId: task.id, contextId: task.contextId, ...invoke(withoutBrand) });
    expect(invalid.result.status.state).toBe('input-required');
    // Off the schema (brand is required): asked again, naming where, as the seller checks every request.
    expect(dataOf(invalid.result)).toMatchObject({ status: 'input-required', errors: [{ code: 'VALIDATION_ERROR', field: '/brand' }] });

    const valid = await send({ messageId: crypto.randomUUID(), taskId: task.id, contextId: task.contextId, ...invoke({ ...input, ext: { sandbox: { then: 'submitted' } } }) });
    expect(valid.result.status.state).toBe('completed');
    const reply = dataOf(valid.result);
    expect(reply).toMatchObject({ status: 'submitted', task_id: dataOf(task).task_id });
    expect(valid.result.artifacts[0].metadata).toEqual({ adcp_task_id: reply.task_id });
    await expect.poll(() => seller.getTask(reply.task_id)?.status, { timeout: 10_000 }).toBe('completed');
    expect(seller.stats().mediaBuysCreatedByKey[input.idempotency_key as string]).toBe(1);
  });

  it('auth-required waits for the refreshed credential on the follow-up', async () => {
    const { input, task } = await ask('sandbox_auth_required');
    expect(task.status.state).toBe('auth-required');
    const stale = await send({ messageId: crypto.randomUUID(), taskId: task.id, contextId: task.contextId, ...invoke(input) }, { authorization: 'Bearer old-token-abcdefgh' });
    expect(stale.result.status.state).toBe('auth-required');
    const fresh = await send({ messageId: crypto.randomUUID(), taskId: task.id, contextId: task.contextId, ...invoke(input) }, { authorization: 'Bearer fresh-token-abcdefgh' });
    expect(fresh.result.status.state).toBe('completed');
    expect(dataOf(fresh.result).media_buy_id).toMatch(/^mb_/);
  });
});
