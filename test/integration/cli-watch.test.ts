/**
 * `ops watch` and `ops cancel` as real child processes against a real orchestrator
 * and the sandbox seller over loopback: changes printed as they happen, the exit
 * code saying how the operation ended, the tenant's stream filtered to what waits
 * for a person, and a server restart crossed with nothing missed and nothing
 * printed twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { runCli, spawnCli, type LiveCli } from '../helpers/cli-process.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

describe('ops watch and ops cancel (child processes)', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  const live: LiveCli[] = [];

  beforeAll(async () => {
    // A review that never ends by itself: the test completes a task when it wants to (seller.completeTask).
    seller = await startSandboxSeller({ submittedDelayMs: 600_000 });
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  });
  afterAll(async () => {
    await Promise.all(live.map((c) => c.stop()));
    await orch?.close();
    await seller?.close();
  });

  const target = (o: TestOrchestrator = orch) => ['--url', o.url, '--api-key', o.apiKey];
  const watch = (args: string[]) => {
    const c = spawnCli(['ops', 'watch', ...args, ...target()]);
    live.push(c);
    return c;
  };
  const buy = async (productId: string, o: TestOrchestrator = orch, webhook = 'rfc9421') => {
    const res = await o.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), webhook });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { id: string; status: string; task_id: string };
  };
  /**
   * The tenant's stream starts from the moment it connects, which a child process
   * takes seconds to reach: until one shows, make buys that wait for a person.
   */
  const streaming = async (w: LiveCli) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const probe = await buy('sandbox_input_required');
      try {
        return await w.waitForLine((l) => l.includes(probe.id), 1000);
      } catch (err) {
        if (!w.running() || Date.now() > deadline) throw err;
      }
    }
  };
  const actor = async () => (await orch.app.store.tenants.listApiKeys(orch.tenantId))[0]!.name;

  it('prints the history, then each change as it happens, and exits 0 when the operation completes', async () => {
    const op = await buy('sandbox_submitted');
    expect(op.status).toBe('submitted');
    const w = watch([op.id]);
    const submitted = await w.waitForLine((l) => l.includes('operation.submitted'));
    expect(submitted.text).toContain(op.id);
    expect(submitted.text).toMatch(/calling_adcp -> submitted/);
    // The history came first, oldest first.
    expect(w.lines[0]!.text).toMatch(/operation\.created\s+-> requested\s+user by /);
    expect(w.running()).toBe(true);

    seller.completeTask(op.task_id);
    const completed = await w.waitForLine((l) => l.includes('operation.completed'));
    const exit = await w.exited;
    expect(exit.code).toBe(0);
    expect(completed.at).toBeGreaterThan(submitted.at);
    // From the stream, not the history: the notification's media_buy_id is on the line.
    const mediaBuyId = (await orch.api('GET', `/v1/operations/${op.id}`)).body.result.media_buy_id;
    expect(completed.text).toMatch(/submitted -> completed\s+webhook/);
    expect(completed.text).toContain(`media_buy_id=${mediaBuyId}`);
    // One line per change, none twice.
    const texts = w.lines.map((l) => l.text);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts.at(-1)).toBe(completed.text);
  });

  it('exits 1 at once for an operation that already ended rejected; --json lines parse', async () => {
    const op = await buy('sandbox_rejected');
    expect(op.status).toBe('rejected');
    const w = watch([op.id, '--json']);
    const exit = await w.exited;
    expect(exit.code, w.stderr()).toBe(1);
    const objects = w.lines.map((l) => JSON.parse(l.text));
    // As JSON the history is the operation itself, with its events.
    expect(objects).toHaveLength(1);
    expect(objects[0]).toMatchObject({ id: op.id, status: 'rejected' });
    expect(objects[0].events.at(-1)).toMatchObject({ kind: 'transition', to: 'rejected' });
  });

  it('exits 1 when the watched operation is canceled (by ops cancel, whose line says so)', async () => {
    const op = await buy('sandbox_submitted');
    const w = watch([op.id]);
    await w.waitForLine((l) => l.includes('operation.submitted'));

    const cancel = await runCli(['ops', 'cancel', op.id, '--reason', 'campaign pulled', ...target()]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toMatch(new RegExp(`^${op.id}\\s+create_media_buy\\s+canceled`));
    const canceled = await w.waitForLine((l) => l.includes('operation.canceled'));
    expect((await w.exited).code).toBe(1);
    expect(canceled.text).toMatch(new RegExp(`submitted -> canceled\\s+user by ${await actor()}`));
    expect(canceled.text).toContain('campaign pulled');
  });

  it('ops cancel of a completed media buy prints the child operation canceling it at the seller (--json)', async () => {
    const op = await buy('sandbox_instant');
    expect(op.status).toBe('completed');
    const run = await runCli(['ops', 'cancel', op.id, '--json', ...target()]);
    expect(run.code, run.stderr).toBe(0);
    const body = JSON.parse(run.stdout);
    expect(body).toMatchObject({ id: op.id, status: 'completed', seller_cancel: { type: 'update_media_buy', parent_id: op.id } });
    expect((await waitForStatus(orch, body.seller_cancel.id, ['completed', 'failed'])).status).toBe('completed');
  });

  it('without an id, --needs-input follows only what waits for a person, across the tenant', async () => {
    const w = watch(['--needs-input']);
    await streaming(w);
    const instant = await buy('sandbox_instant');
    const waiting = await buy('sandbox_input_required');
    const line = await w.waitForLine((l) => l.includes(waiting.id));
    expect(line.text).toMatch(/operation\.input_required\s+calling_adcp -> input-required\s+call/);
    // The seller's message is on the line, quoted.
    expect(line.text).toMatch(/"Sandbox seller needs the insertion order approved/);
    expect(w.running()).toBe(true);
    await w.stop();
    const texts = w.lines.map((l) => l.text);
    // Nothing of the buy that never waited, nothing that did not leave one waiting (its creation).
    expect(texts.some((t) => t.includes(instant.id))).toBe(false);
    expect(texts.every((t) => t.includes('operation.input_required'))).toBe(true);
    expect(new Set(texts).size).toBe(texts.length);
  });

  it('crosses a server restart: resumes after the last notification (Last-Event-ID), or re-reads the history when none had come', async () => {
    const port = new URL(orch.url).port;
    const database = orch.database;

    // The tenant's stream, which gets a notification before the restart: it resumes after it.
    const all = watch([]);
    await streaming(all);
    const before = await buy('sandbox_instant');
    await all.waitForLine((l) => l.includes(before.id) && l.includes('operation.completed'));
    // One operation, whose stream gets nothing before the restart: it re-reads the history.
    const pending = await buy('sandbox_submitted', orch, 'none');
    const one = watch([pending.id]);
    await one.waitForLine((l) => l.includes('operation.submitted'));

    // Stopped without dropping its database (orch.close() would).
    await orch.app.close();
    // While the usual address is down, another instance on the same database makes changes:
    // the pending buy completes (polled), a new one is made. Then the usual address comes back.
    const elsewhere = await startOrchestrator({ database, keepDatabase: true });
    seller.completeTask(pending.task_id);
    await waitForStatus(elsewhere, pending.id, ['completed']);
    const during = await buy('sandbox_instant', elsewhere);
    await elsewhere.close();
    orch = await startOrchestrator({ database, env: { PORT: port, ADCP_ORCH_PUBLIC_URL: `http://127.0.0.1:${port}` } });

    const completed = await one.waitForLine((l) => l.includes('operation.completed'));
    expect(completed.text).toMatch(/submitted -> completed\s+poll/);
    expect((await one.exited).code).toBe(0);
    await all.waitForLine((l) => l.includes(during.id) && l.includes('operation.completed'));
    await all.stop();

    for (const c of [all, one]) {
      expect(c.stderr()).toMatch(/connection lost .*reconnecting/);
      expect(c.stderr()).toContain('reconnected');
      const texts = c.lines.map((l) => l.text);
      expect(new Set(texts).size, texts.join('\n')).toBe(texts.length);
    }
    const seen = all.lines.map((l) => l.text);
    // Everything the tenant's stream missed while it was away, in order: the pending buy's completion, then the new buy.
    const index = (id: string, type: string) => seen.findIndex((t) => t.includes(id) && t.includes(type));
    expect(index(pending.id, 'operation.completed')).toBeGreaterThan(index(before.id, 'operation.completed'));
    expect(index(during.id, 'operation.created')).toBeGreaterThan(index(pending.id, 'operation.completed'));
    expect(index(during.id, 'operation.completed')).toBeGreaterThan(index(during.id, 'operation.created'));
  });
});
