/**
 * `adcp-orchestrator ops respond` as a child process against a running
 * orchestrator and the sandbox seller, with `ops watch` following along: an
 * approved hold goes out and is watched through submitted and completed as it
 * happens; an answer the API refuses exits 1 with its code and changes nothing;
 * a rejection buys nothing; corrected params go out as a child operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { runCli, spawnCli, type LiveCli } from '../helpers/cli-process.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

describe('ops respond (child processes)', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  const live: LiveCli[] = [];

  beforeAll(async () => {
    // A short review: a sent buy is submitted, then completed by the seller's webhook a moment later.
    seller = await startSandboxSeller({ submittedDelayMs: 2000 });
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  });
  afterAll(async () => {
    await Promise.all(live.map((c) => c.stop()));
    await orch?.close();
    await seller?.close();
  });

  const target = () => ['--url', orch.url, '--api-key', orch.apiKey];
  const buy = async (productId: string, extra: Record<string, unknown> = {}) => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { id: string; status: string; idempotency_key: string; needs_input: boolean };
  };
  const show = async (id: string) => (await orch.api('GET', `/v1/operations/${id}`)).body;
  const sellerCalls = (key: string) => seller.stats().calls.filter((c) => c.tool === 'create_media_buy' && c.idempotency_key === key);
  const actor = async () => (await orch.app.store.tenants.listApiKeys(orch.tenantId))[0]!.name;

  it('approving a held buy sends it; ops watch shows answered, submitted, completed as they happen, then exits 0', async () => {
    const op = await buy('sandbox_submitted', { approval: 'required' });
    expect(op).toMatchObject({ status: 'requested', needs_input: true });
    const w = spawnCli(['ops', 'watch', op.id, ...target()]);
    live.push(w);
    await w.waitForLine((l) => l.includes('operation.input_required'));
    expect(sellerCalls(op.idempotency_key)).toEqual([]);

    const beforeAnswer = Date.now();
    const approved = await runCli(['ops', 'respond', op.id, '--approve', '--message', 'within plan', ...target()]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(new RegExp(`^${op.id}\\s+create_media_buy\\s`));

    const answered = await w.waitForLine((l) => l.includes('operation.answered'));
    expect(answered.text).toMatch(new RegExp(`user by ${await actor()}  approve  "within plan"$`));
    const submitted = await w.waitForLine((l) => l.includes('operation.submitted'));
    expect(w.running()).toBe(true);
    const completed = await w.waitForLine((l) => l.includes('operation.completed'));
    const exit = await w.exited;
    expect(exit.code).toBe(0);
    // Live: both came after the answer that caused them was given, the submitted one first, while the watch ran.
    expect(submitted.at).toBeGreaterThan(beforeAnswer);
    expect(completed.at).toBeGreaterThan(submitted.at);
    expect(submitted.text).toMatch(/calling_adcp -> submitted\s+call/);
    expect(completed.text).toMatch(/submitted -> completed\s+webhook  media_buy_id=mb_/);
    expect(sellerCalls(op.idempotency_key)).toHaveLength(1);
  });

  it('an answer the API refuses exits 1 with its code and changes nothing; a rejection with a reason buys nothing', async () => {
    const op = await buy('sandbox_instant', { approval: 'required', webhook: 'none' });
    const noReason = await runCli(['ops', 'respond', op.id, '--reject', ...target()]);
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toMatch(/^error: message_required: rejecting a spend approval needs a message saying why$/m);
    expect(await show(op.id)).toMatchObject({ status: 'requested', needs_input: true });

    const rejected = await runCli(['ops', 'respond', op.id, '--reject', '--message', 'not this quarter', '--json', ...target()]);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ id: op.id, status: 'rejected', needs_input: false });
    const shown = await show(op.id);
    expect(shown.events.find((e: { kind: string }) => e.kind === 'answered')).toMatchObject({ actor: await actor(), detail: { decision: 'reject', message: 'not this quarter' } });
    expect(sellerCalls(op.idempotency_key)).toEqual([]);
  });

  it('--params sends the corrected request as a child operation (MCP has no continuation, so --approve is refused)', async () => {
    const op = await buy('sandbox_input_required', { webhook: 'none' });
    expect(op).toMatchObject({ status: 'input-required', needs_input: true });

    const approve = await runCli(['ops', 'respond', op.id, '--approve', ...target()]);
    expect(approve.code).toBe(1);
    expect(approve.stderr).toMatch(/^error: no_continuation: /m);

    const corrected = { packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_std', budget: 30000 }] };
    const run = await runCli(['ops', 'respond', op.id, '--params', JSON.stringify(corrected), '--message', 'use the instant product', ...target()]);
    expect(run.code, run.stderr).toBe(0);
    const [, childId] = /^child {2}(\S+)\s+create_media_buy\s/.exec(run.stdout) ?? [];
    expect(childId).toBeDefined();
    const child = await waitForStatus(orch, childId!, ['completed', 'failed', 'rejected']);
    expect(child).toMatchObject({ status: 'completed', parent_id: op.id, request: { packages: corrected.packages } });
    expect(await show(op.id)).toMatchObject({ status: 'canceled', needs_input: false });
  });
});
