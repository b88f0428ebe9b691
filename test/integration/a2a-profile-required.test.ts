/**
 * A seller that requires the AdCP A2A profile v3 (the sandbox with `a2aRequireProfile`)
 * takes every A2A request the orchestrator makes: the create from POST /v1/media-buys,
 * the polls of its task, and a person's answer on the A2A continuation. A request that
 * does not activate the profile is refused with A2A's ExtensionSupportRequiredError, and
 * nothing is done for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

const PROFILE = 'https://adcontextprotocol.org/extensions/adcp/v3';

describe('a seller that requires the AdCP A2A profile', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    seller = await startSandboxSeller({ a2aRequireProfile: true, submittedDelayMs: 300 });
    orch = await startOrchestrator({ env: { ADCP_ORCH_POLL_INTERVAL_MS: '200' } });
    agentId = await orch.registerAgent({ name: 'a2a-profile-required', url: seller.a2aUrl!, protocol: 'a2a' });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  const buy = async (productId: string) => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), webhook: 'none' });
    expect(res.status).toBe(202);
    return res.body;
  };

  it('refuses a raw request that does not activate the profile, and does nothing for it', async () => {
    const key = `raw-${crypto.randomUUID()}`;
    const send = (headers: Record<string, string>) =>
      fetch(seller.a2aUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'message/send',
          params: { message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'data', data: { skill: 'create_media_buy', input: { ...mediaBuyRequest('sandbox_instant'), idempotency_key: key } } }] } },
        }),
      }).then((r) => r.json() as Promise<any>);
    const refused = await send({});
    expect(refused).toMatchObject({ id: 7, error: { code: -32008, data: { reason: 'extension_not_activated', required_extensions: [PROFILE] } } });
    expect(seller.stats().createCallsByKey[key]).toBeUndefined();
    // The same request, activated, is taken: the refusal was for the missing activation alone.
    const taken = await send({ 'A2A-Extensions': PROFILE });
    expect(taken.error).toBeUndefined();
    expect(seller.stats().mediaBuysCreatedByKey[key]).toBe(1);
  });

  it('takes the create and the polls of its task', async () => {
    const op = await buy('sandbox_submitted');
    expect(op.task_id).toEqual(expect.any(String));
    const done = await waitForStatus(orch, op.id, ['completed', 'failed', 'rejected', 'canceled']);
    expect(done.status).toBe('completed');
    // What ended it was our poll of the task (no webhook was asked for).
    expect(done.events.at(-1)).toMatchObject({ kind: 'transition', source: 'poll', to: 'completed' });
    expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
  });

  it("takes a person's answer on the A2A continuation", async () => {
    const op = await buy('sandbox_input_required');
    expect(op.status).toBe('input-required');
    const res = await orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'approve' });
    expect(res.status).toBe(202);
    const done = await waitForStatus(orch, op.id, ['completed', 'failed', 'rejected', 'canceled']);
    expect(done.status).toBe('completed');
    expect(done.events.map((e: any) => e.kind)).toContain('answer_sent');
    expect(seller.stats().continuations.filter((c) => c.task_id === op.task_id).map((c) => c.outcome)).toEqual(['completed']);
    expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
  });
});
