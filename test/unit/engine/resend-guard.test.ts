/**
 * The resend guard (src/engine/resend-guard.ts) with a stub store and seller: the age of
 * a send counted from its key's first send, the natural-key lookups (a buy whose echoed
 * context names us is bound; a look-alike stalls; nothing resends; a sync_creatives read
 * by its creative ids), an IDEMPOTENCY_EXPIRED answer, and the stall it writes.
 */
import { describe, expect, it } from 'vitest';
import type { AdcpClient, AgentEndpoint, TaskReply } from '../../../src/adcp/types.js';
import { ResendGuard, idempotencyUnknownPlan, type GuardAction } from '../../../src/engine/resend-guard.js';
import { RequestSealer } from '../../../src/engine/sealed-request.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import type { OperationRow } from '../../../src/store/operations-repo.js';
import type { SecretBox } from '../../../src/store/secret-box.js';
import type { Store } from '../../../src/store/index.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-06-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const timing = { pollIntervalMs: 1_000, backupPollAfterMs: 60_000, workingTimeoutMs: 300_000, maxPolls: 2000 };

const CREATE = {
  idempotency_key: 'key_0123456789abcdef',
  account: { account_id: 'acc_1' },
  brand: { domain: 'example-brand.com' },
  start_time: 'asap',
  end_time: '2027-12-31T23:59:59Z',
  packages: [{ product_id: 'prod_display', budget: 5000 }],
  context: { orchestrator_operation_id: 'op_1' },
};
const SYNC = {
  idempotency_key: 'key_0123456789abcdef',
  account: { account_id: 'acc_1' },
  creatives: [{ creative_id: 'cr_1' }, { creative_id: 'cr_2' }],
  context: { orchestrator_operation_id: 'op_1' },
};

function op(type: string, request: Record<string, unknown>, over: Partial<OperationRow> = {}): OperationRow {
  return newOperationRow(
    { id: 'op_1', tenant_id: 't', agent_id: 'ag_1', type, idempotency_key: 'key_0123456789abcdef', request_body: JSON.stringify(request), created_at: T0 - 5 * 24 * HOUR },
    { status: 'calling_adcp', check_kind: 'send', attempt: 1, ...over },
  );
}

/** The guard over a stub store (one agent, the operation's events) and a seller answering `answer`. */
function guardWith(opts: { idempotency?: unknown; firstSentAt?: number; answer?: (task: string, params: Record<string, unknown>) => Record<string, unknown> }) {
  const capabilities = opts.idempotency === undefined ? null : JSON.stringify({ adcp: { major_versions: [3], supported_versions: null, idempotency: opts.idempotency } });
  const agent = { id: 'ag_1', url: 'http://seller.test/mcp', protocol: 'mcp', auth_token_enc: null, capabilities, capabilities_error: capabilities ? null : 'no capabilities (the agent answered NOT_SUPPORTED): spoken to as AdCP 3.0' };
  const events = [
    { id: 1, at: T0 - 5 * 24 * HOUR, kind: 'created', from_status: null, to_status: 'requested' },
    ...(opts.firstSentAt !== undefined ? [{ id: 2, at: opts.firstSentAt, kind: 'transition', from_status: 'requested', to_status: 'calling_adcp' }] : []),
    { id: 3, at: (opts.firstSentAt ?? T0) + 1000, kind: 'send_failed', from_status: null, to_status: null },
  ];
  const store = { agents: { get: async () => agent }, operations: { events: async () => events } } as unknown as Store;
  const calls: Array<{ task: string; params: Record<string, unknown> }> = [];
  const callTask = async (_agent: AgentEndpoint, task: string, params: Record<string, unknown>): Promise<TaskReply> => {
    calls.push({ task, params });
    return { status: 'completed', data: opts.answer?.(task, params) ?? {} };
  };
  const guard = new ResendGuard({
    store,
    adcp: { callTask } as unknown as AdcpClient,
    secrets: {} as SecretBox,
    requests: new RequestSealer({} as SecretBox),
    callTimeoutMs: 30_000,
    replayWindowMs: 24 * HOUR,
  });
  return { guard, calls };
}

const buyLike = (over: Record<string, unknown> = {}) => ({
  media_buy_id: 'mb_1',
  account: { account_id: 'acc_1' },
  status: 'pending_creatives',
  end_time: '2027-12-31T23:59:59Z',
  created_at: iso(T0 + 1000),
  packages: [{ package_id: 'pkg_1', product_id: 'prod_display', budget: 5000 }],
  ...over,
});

describe('how old a send is', () => {
  it('counts from the key\'s first send (its step to calling_adcp), not from the operation\'s creation', async () => {
    // Created five days ago (held for approval, say), first sent ten minutes ago, at a seller replaying for an hour.
    const { guard, calls } = guardWith({ idempotency: { supported: true, replay_ttl_seconds: 3600 }, firstSentAt: T0 });
    expect(await guard.beforeResend(op('create_media_buy', CREATE), T0 + 10 * 60_000)).toEqual({ kind: 'resend' });
    expect(calls).toEqual([]);
  });

  it('past the declared window it is looked up before anything is sent', async () => {
    const { guard, calls } = guardWith({ idempotency: { supported: true, replay_ttl_seconds: 3600 }, firstSentAt: T0, answer: () => ({ media_buys: [] }) });
    const action = await guard.beforeResend(op('create_media_buy', CREATE), T0 + 2 * HOUR);
    expect(calls.map((c) => c.task)).toEqual(['get_media_buys']);
    expect(action).toMatchObject({ kind: 'resend', note: expect.stringMatching(/declared replay window.*no matching media buy at the seller: resending is safe/) });
  });
});

describe('create_media_buy at a seller declaring supported:false', () => {
  const unsupported = { supported: false };

  it('a buy whose echoed context names this operation is bound', async () => {
    const ours = buyLike({ context: { orchestrator_operation_id: 'op_1' } });
    const { guard } = guardWith({ idempotency: unsupported, firstSentAt: T0, answer: () => ({ media_buys: [buyLike({ media_buy_id: 'mb_0', context: { orchestrator_operation_id: 'op_other' } }), ours] }) });
    const action = await guard.beforeResend(op('create_media_buy', CREATE), T0 + 60_000);
    expect(action).toMatchObject({ kind: 'bind', record: ours, note: expect.stringMatching(/mb_1 carries this operation's context/) });
  });

  it('a look-alike without context is not bound: the operation stalls for a person', async () => {
    const { guard } = guardWith({ idempotency: unsupported, firstSentAt: T0, answer: () => ({ media_buys: [buyLike()] }) });
    const action = await guard.beforeResend(op('create_media_buy', CREATE), T0 + 60_000);
    expect(action).toMatchObject({ kind: 'stall', message: expect.stringMatching(/supported: false.*may be this one \(mb_1\)/), detail: { lookup: 'candidates', candidates: ['mb_1'] } });
  });

  it('a buy another of our operations made is not a candidate', async () => {
    const { guard } = guardWith({ idempotency: unsupported, firstSentAt: T0, answer: () => ({ media_buys: [buyLike({ context: { orchestrator_operation_id: 'op_other' } })] }) });
    expect(await guard.beforeResend(op('create_media_buy', CREATE), T0 + 60_000)).toMatchObject({ kind: 'resend' });
  });

  it('a task without a natural key (update_media_buy) stalls, nothing looked up', async () => {
    const { guard, calls } = guardWith({ idempotency: unsupported, firstSentAt: T0 });
    const action = await guard.beforeResend(op('update_media_buy', { idempotency_key: 'key_0123456789abcdef', media_buy_id: 'mb_1', paused: true }), T0 + 60_000);
    expect(calls).toEqual([]);
    expect(action).toMatchObject({ kind: 'stall', message: expect.stringMatching(/^update_media_buy not sent again: .*no natural key/) });
  });
});

describe('sync_creatives looked up by its creative ids', () => {
  const undeclared = null;

  it('asks list_creatives for its ids in its account; none changed since the send: resend', async () => {
    const { guard, calls } = guardWith({
      idempotency: undeclared,
      firstSentAt: T0,
      answer: () => ({ creatives: [{ creative_id: 'cr_1', created_date: iso(T0 - 2 * 24 * HOUR), updated_date: iso(T0 - 24 * HOUR) }] }),
    });
    const action = await guard.beforeResend(op('sync_creatives', SYNC), T0 + 60_000);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ task: 'list_creatives', params: { account: { account_id: 'acc_1' }, filters: { creative_ids: ['cr_1', 'cr_2'] } } });
    expect(action).toMatchObject({ kind: 'resend', note: expect.stringMatching(/declares no idempotency support.*none of its creatives/) });
  });

  it('one created since the send: stalled, naming it', async () => {
    const { guard } = guardWith({
      idempotency: undeclared,
      firstSentAt: T0,
      answer: () => ({ creatives: [{ creative_id: 'cr_2', created_date: iso(T0 + 500), updated_date: iso(T0 + 500) }] }),
    });
    expect(await guard.beforeResend(op('sync_creatives', SYNC), T0 + 60_000)).toMatchObject({ kind: 'stall', detail: { candidates: ['cr_2'] } });
  });
});

describe('an IDEMPOTENCY_EXPIRED answer', () => {
  const expired = { code: 'IDEMPOTENCY_EXPIRED', message: 'idempotency_key is past the replay window', recovery: 'correctable' as const };

  it('with nothing at the seller: failed with the seller\'s error, saying nothing was done', async () => {
    const { guard } = guardWith({ idempotency: { supported: true, replay_ttl_seconds: 3600 }, firstSentAt: T0, answer: () => ({ media_buys: [] }) });
    const action = await guard.afterExpired(op('create_media_buy', CREATE), expired);
    expect(action).toMatchObject({ kind: 'fail', error: { code: 'IDEMPOTENCY_EXPIRED', message: expect.stringMatching(/no matching media buy.*not carried out/) } });
  });

  it('with a look-alike: stalled, the seller\'s error kept', async () => {
    const { guard } = guardWith({ idempotency: { supported: true, replay_ttl_seconds: 3600 }, firstSentAt: T0, answer: () => ({ media_buys: [buyLike()] }) });
    const action = await guard.afterExpired(op('create_media_buy', CREATE), expired);
    expect(action).toMatchObject({ kind: 'stall', error: expired, message: expect.stringMatching(/IDEMPOTENCY_EXPIRED.*may be this one \(mb_1\)/) });
  });
});

describe('idempotencyUnknownPlan', () => {
  const stall: Extract<GuardAction, { kind: 'stall' }> = { kind: 'stall', message: 'create_media_buy not sent again: …', detail: { why: '…', lookup: 'candidates', candidates: ['mb_1'] } };

  it('unknown and stalled with reason idempotency_unknown, and no timer: nothing is sent again by itself', () => {
    const plan = idempotencyUnknownPlan(op('create_media_buy', CREATE), stall, T0, timing, () => 0);
    expect(plan.patch).toMatchObject({ status: 'unknown', stalled: 1, stalled_reason: stall.message, next_check_at: null, check_kind: null });
    expect(plan.events).toEqual([
      expect.objectContaining({ kind: 'transition', from: 'calling_adcp', to: 'unknown' }),
      expect.objectContaining({ kind: 'stalled', detail: expect.objectContaining({ reason: 'idempotency_unknown', message: stall.message, candidates: ['mb_1'] }) }),
    ]);
  });

  it('a task already bound is still polled, slowly', () => {
    const plan = idempotencyUnknownPlan(op('create_media_buy', CREATE, { status: 'unknown', task_id: 'task_1' }), stall, T0, timing, () => 0);
    expect(plan.patch).toMatchObject({ check_kind: 'poll', stalled: 1 });
    expect(plan.patch?.next_check_at).toBeGreaterThan(T0);
  });
});
