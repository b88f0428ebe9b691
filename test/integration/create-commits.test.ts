/**
 * A create_media_buy sent at once waits for one commit before the call and one after
 * (BENCHMARKS.md, Targets, per-call overhead): the operation is stored already leased and marked
 * `calling_adcp` in the insert, so when the seller receives the bytes the committed row
 * (read through another connection to the SQLite file) is already the ambiguous send a
 * crash would leave, with its resend timer, and nothing else was written before it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest, statusPath } from '../helpers/media-buy.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { toolCalls } from '../helpers/raw-calls.js';

let seller: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;
let reader: Store | undefined;

afterAll(async () => {
  await reader?.close();
  await orch?.close();
  await seller?.close();
});

describe('the commits around a create_media_buy', () => {
  it('one before the call (the insert, already calling_adcp) and one after (the reply)', { timeout: 60_000 }, async () => {
    const writes: string[] = [];
    let atArrival: { writes: string[]; row: any; events: any[] } | undefined;
    seller = await startSandboxSeller({
      onMcpRequest: async (raw) => {
        if (toolCalls([raw], 'create_media_buy').length !== 1 || atArrival) return;
        const id = toolCalls([raw], 'create_media_buy')[0]!.args.context.orchestrator_operation_id as string;
        const row = await reader!.operations.get(id);
        atArrival = { writes: [...writes], row, events: await reader!.operations.events(id) };
      },
    });
    orch = await startOrchestrator();
    reader = await openStore(orch.database.url);
    const agentId = await orch.registerAgent({ url: seller.url });
    const ops = orch.app.store.operations;
    for (const name of ['insert', 'mutate'] as const) {
      const original = (ops[name] as (...a: unknown[]) => Promise<unknown>).bind(ops);
      (ops as any)[name] = async (...args: unknown[]) => {
        const result = await original(...args);
        writes.push(name);
        return result;
      };
    }
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant') });
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('completed');

    expect(atArrival).toBeDefined();
    expect(atArrival!.writes).toEqual(['insert']);
    const row = atArrival!.row;
    expect(row.status).toBe('calling_adcp');
    expect(row.check_kind).toBe('send');
    expect(row.lease_owner).not.toBeNull();
    // The resend timer is at the call timeout (5 s here), not "due now".
    expect(row.next_check_at - row.created_at).toBe(orch.config.ADCP_ORCH_CALL_TIMEOUT_MS + 5_000);
    expect(atArrival!.events.map((e: any) => [e.kind, e.to_status])).toEqual([
      ['created', 'requested'],
      ['transition', 'calling_adcp'],
    ]);
    // After the reply: exactly one more write, and the history reads as before.
    expect(writes).toEqual(['insert', 'mutate']);
    const done = await orch.api('GET', `/v1/operations/${created.body.id}`);
    expect(statusPath(done.body)).toEqual(['requested', 'calling_adcp', 'completed']);
  });
});
