/**
 * An answer is matched to the question it answers, against the real sandbox seller over
 * loopback (MCP). A question seen again keeps its id and `requested_at`; when the seller
 * asks something else (here its task's message changes, learnt by poll or by its signed
 * webhook), that is a new question, and an answer naming the old one is 409
 * `question_superseded` and changes nothing. An answer naming no question answers the
 * question asked when it is written, even if the question changed after it was read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import type { OperationRow } from '../../src/store/operations-repo.js';
import { eventually, startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { dialects } from '../helpers/databases.js';

const NEW_QUESTION = 'Sandbox seller now also needs the PO number on the insertion order.';

describe.each(dialects)('an answer is matched to its question, on $name', ({ make }) => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  let approver: string;

  beforeAll(async () => {
    seller = await startSandboxSeller({ port: 0 });
    orch = await startOrchestrator({ database: await make(), env: { ADCP_ORCH_POLL_INTERVAL_MS: '100', ADCP_ORCH_BACKUP_POLL_AFTER_MS: '100' } });
    agentId = await orch.registerAgent({ name: 'seller-mcp', url: seller.url, protocol: 'mcp' });
    approver = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'alice', role: 'approver' });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  const show = async (id: string) => (await orch.api('GET', `/v1/operations/${id}`)).body;
  const answer = (id: string, body: unknown) => orch.api('POST', `/v1/operations/${id}/input`, body, { authorization: `Bearer ${approver}` });
  const buy = async (webhook: 'rfc9421' | 'none') => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_input_required'), webhook });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ status: 'input-required', needs_input: true });
    expect(res.body.input_request.id).toMatch(/^q_/);
    return res.body;
  };
  const polls = (taskId: string) => seller.stats().calls.filter((c) => c.task_id === taskId).length;
  /** The seller asks something else, and the orchestrator has learnt it (by poll or webhook). */
  const askAgain = async (op: any) => {
    expect(seller.setTaskStatus(op.task_id, 'input-required', { message: NEW_QUESTION })).toBe(true);
    return eventually(async () => {
      const now = await show(op.id);
      return now.input_request?.message === NEW_QUESTION ? now : undefined;
    });
  };
  /** The next read of `op` by the answer path returns the row as it was, and the question changes right after. */
  const changeQuestionAfterNextRead = (op: any) => {
    const repo = orch.app.store.operations;
    const read = repo.getForTenant.bind(repo);
    repo.getForTenant = async (tenantId: string, id: string): Promise<OperationRow | undefined> => {
      const row = await read(tenantId, id);
      if (id === op.id) {
        repo.getForTenant = read;
        await askAgain(op);
      }
      return row;
    };
  };

  it('the same question polled again keeps its id and requested_at; another one is new, and an answer to the old one is 409', async () => {
    const op = await buy('none');
    const first = op.input_request;
    await eventually(async () => (polls(op.task_id) >= 3 ? true : undefined));
    expect((await show(op.id)).input_request).toEqual(first);

    const asked = await askAgain(op);
    const second = asked.input_request;
    expect(second.id).not.toBe(first.id);
    expect(Date.parse(second.requested_at)).toBeGreaterThan(Date.parse(first.requested_at));
    expect(asked.events.find((e: any) => e.kind === 'input_requested')).toMatchObject({ source: 'poll', detail: { message: NEW_QUESTION, replaces: first.id } });

    const stale = await answer(op.id, { decision: 'reject', message: 'no', question_id: first.id });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'question_superseded', details: { status: 'input-required', question: { id: second.id, message: NEW_QUESTION } } });
    const after = await show(op.id);
    expect(after).toMatchObject({ status: 'input-required', needs_input: true, input_request: second });
    expect(after.events.filter((e: any) => e.kind === 'answered')).toEqual([]);

    const taken = await answer(op.id, { decision: 'reject', message: 'no', question_id: second.id });
    expect(taken.status, JSON.stringify(taken.body)).toBe(202);
    expect(taken.body.status).toBe('rejected');
  });

  it('the question changes between reading and writing an answer: one naming no question is taken for the new one', async () => {
    const op = await buy('rfc9421');
    changeQuestionAfterNextRead(op);
    const res = await answer(op.id, { decision: 'reject', message: 'whatever it asks' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.status).toBe('rejected');
    const done = await show(op.id);
    const changed = done.events.find((e: any) => e.kind === 'input_requested');
    // Learnt by the seller's webhook or the backup poll, whichever came first (the other then changes nothing).
    expect(changed).toMatchObject({ source: expect.stringMatching(/^(webhook|poll)$/), detail: { message: NEW_QUESTION, replaces: op.input_request.id } });
    expect(done.events.filter((e: any) => e.kind === 'input_requested')).toHaveLength(1);
    // The answer names the question it was taken for: the new one.
    const answered = done.events.find((e: any) => e.kind === 'answered');
    expect(answered.detail.question_id).toMatch(/^q_/);
    expect(answered.detail.question_id).not.toBe(op.input_request.id);
    expect(done.events.indexOf(answered)).toBeGreaterThan(done.events.indexOf(changed));
  });

  it('… while one naming the question it was shown is 409 question_superseded, and changes nothing', async () => {
    const op = await buy('rfc9421');
    changeQuestionAfterNextRead(op);
    const res = await answer(op.id, { decision: 'reject', message: 'no', question_id: op.input_request.id });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('question_superseded');
    const now = await show(op.id);
    expect(now).toMatchObject({ status: 'input-required', needs_input: true, input_request: { message: NEW_QUESTION } });
    expect(res.body.error.details.question.id).toBe(now.input_request.id);
    expect(now.events.filter((e: any) => e.kind === 'answered')).toEqual([]);
  });
});
