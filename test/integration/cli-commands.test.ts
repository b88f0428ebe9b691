/**
 * The API commands as real child processes against a real orchestrator: bad usage
 * exits 2 and sends nothing, an API error is `error: <code>: <message>` with exit 1
 * (never a stack trace), `--json` prints JSON that parses, and `subscriptions
 * add|list|deliveries` manage outbound webhooks end to end (the secret printed once
 * is the one that signs what the receiver gets).
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { runCli, type CliRun } from '../helpers/cli-process.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { freePort } from '../helpers/ports.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const STACK_FRAME = /^\s+at /m;

describe('API commands (child processes)', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    seller = await startSandboxSeller();
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: seller.url });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await orch?.close();
    await seller?.close();
  });

  const target = () => ['--url', orch.url, '--api-key', orch.apiKey];
  const buy = async (productId: string) => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), webhook: 'none' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { id: string; status: string };
  };
  const expectError = (run: CliRun, code: number, message: RegExp) => {
    expect(run.code, run.stdout + run.stderr).toBe(code);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(STACK_FRAME);
  };

  it('bad usage exits 2 with a clear message and sends nothing', async () => {
    // Pointed at a recorder: any request at all would show there.
    const nowhere = ['--url', receiver.url, '--api-key', 'aok_unused'];
    const before = receiver.requests.length;
    const [both, array, notJson, none, unknownOption, badEvents, badStatus] = await Promise.all([
      runCli(['ops', 'respond', 'op-1', '--approve', '--reject', ...nowhere]),
      runCli(['ops', 'respond', 'op-1', '--params', '[1,2]', ...nowhere]),
      runCli(['ops', 'respond', 'op-1', '--params', '{nope', '--message', 'x', ...nowhere]),
      runCli(['ops', 'respond', 'op-1', '--message', 'only a note', ...nowhere]),
      runCli(['ops', 'list', '--bogus', ...nowhere]),
      runCli(['subscriptions', 'add', 'https://hooks.example.com/x', '--events', 'operation.completed,operation.bogus', ...nowhere]),
      runCli(['ops', 'watch', '--status', 'done', ...nowhere]),
    ]);
    expectError(both, 2, /^error: give only one of --approve, --reject, --params \(got --approve, --reject\)$/m);
    expectError(array, 2, /^error: --params must be a JSON object/m);
    expectError(notJson, 2, /^error: --params is not valid JSON/m);
    expectError(none, 2, /^error: give one of --approve, --reject or --params JSON$/m);
    expectError(unknownOption, 2, /^error: unknown option '--bogus'/m);
    expectError(badEvents, 2, /^error: unknown notification type\(s\) in --events: operation\.bogus/m);
    expectError(badStatus, 2, /^error: --status must be one of /m);
    expect(receiver.requests.length).toBe(before);
  });

  it('an error the API answers is `error: <code>: <message>`, exit 1', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const [missing, badKey, badUrl, unreachable] = await Promise.all([
      runCli(['ops', 'show', 'no-such-operation', ...target()]),
      runCli(['ops', 'list', '--url', orch.url, '--api-key', 'aok_wrong']),
      runCli(['subscriptions', 'add', 'ftp://hooks.example.com/x', ...target()]),
      runCli(['agents', 'list', '--url', closed, '--api-key', orch.apiKey]),
    ]);
    expectError(missing, 1, /^error: operation_not_found: operation no-such-operation not found$/m);
    expectError(badKey, 1, /^error: unauthorized: API key not recognised$/m);
    expectError(badUrl, 1, /^error: invalid_url: /m);
    expectError(unreachable, 1, new RegExp(`^error: cannot reach ${closed}: ECONNREFUSED$`, 'm'));
  });

  it('--json on every command prints JSON', async () => {
    const op = await buy('sandbox_instant');
    const runs = await Promise.all([
      runCli(['ops', 'list', '--json', ...target()]),
      runCli(['ops', 'show', op.id, '--json', ...target()]),
      runCli(['agents', 'list', '--json', ...target()]),
      runCli(['agents', 'add', '--name', 'second', '--agent-url', seller.url, '--json', ...target()]),
      runCli(['reconcile', '--agent', agentId, '--json', ...target()]),
      runCli(['keys', 'create', '--tenant', 'test-tenant', '--name', 'from-cli', '--role', 'viewer', '--json', '--db', orch.database.url]),
    ]);
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const [list, show, agents, added, reconcile, key] = runs.map((r) => JSON.parse(r.stdout));
    expect(list.operations.map((o: { id: string }) => o.id)).toContain(op.id);
    expect(show).toMatchObject({ id: op.id, status: 'completed' });
    expect(show.events.length).toBeGreaterThan(1);
    expect(agents.agents.map((a: { id: string }) => a.id)).toContain(agentId);
    expect(added).toMatchObject({ name: 'second', role: 'seller', url: seller.url });
    expect(reconcile.reports).toEqual([expect.objectContaining({ agent_id: agentId })]);
    expect(key).toMatchObject({ tenant: 'test-tenant', name: 'from-cli', role: 'viewer' });
    expect(key.key).toMatch(/^aok_/);
    // The key printed works, with the role it was given.
    expect((await fetch(`${orch.url}/v1/operations`, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(200);
  });

  it('subscriptions add prints the id and the secret once; list and deliveries show what was sent', async () => {
    const add = await runCli(['subscriptions', 'add', receiver.url, '--events', 'operation.completed', ...target()]);
    expect(add.code, add.stderr).toBe(0);
    const lines = add.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const id = lines[0]!.split(/\s+/)[0]!;
    const secret = lines[1]!;
    expect(lines[0]).toMatch(/\s+active\s+standard\s+operation\.completed\s+http:\/\/127\.0\.0\.1:/);
    expect(secret).toMatch(/^whsec_/);
    expect(add.stderr).toMatch(/shown once/);

    const op = await buy('sandbox_instant');
    const got = await receiver.waitFor(() => receiver.requests.find((r) => r.body.includes(op.id)));
    // The secret printed is the one that signs the deliveries.
    expect(new Webhook(secret).verify(got.body, got.headers)).toMatchObject({ type: 'operation.completed', data: { operation: { id: op.id } } });
    await eventually(async () => {
      const res = await orch.api('GET', `/v1/subscriptions/${id}/deliveries`);
      return res.body.deliveries.some((d: { status: string }) => d.status === 'delivered') ? true : undefined;
    });

    const [list, listJson, deliveries, deliveriesJson] = await Promise.all([
      runCli(['subscriptions', 'list', ...target()]),
      runCli(['subscriptions', 'list', '--json', ...target()]),
      runCli(['subscriptions', 'deliveries', id, ...target()]),
      runCli(['subscriptions', 'deliveries', id, '--json', ...target()]),
    ]);
    for (const run of [list, listJson, deliveries, deliveriesJson]) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).not.toContain(secret);
    }
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s+active\\s+standard\\s+operation\\.completed\\s+`, 'm'));
    expect(JSON.parse(listJson.stdout).subscriptions).toEqual([expect.objectContaining({ id, status: 'active', events: ['operation.completed'] })]);
    expect(deliveries.stdout).toMatch(/operation\.completed\s+delivered\s+attempts 1\s+HTTP 204\s+ntf_/);
    expect(deliveries.stdout).toContain(op.id);
    const page = JSON.parse(deliveriesJson.stdout);
    expect(page.deliveries[0]).toMatchObject({ subscription_id: id, type: 'operation.completed', operation_id: op.id, status: 'delivered', last_status: 204 });
  });
});
