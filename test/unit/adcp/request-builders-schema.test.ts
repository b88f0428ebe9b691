/**
 * The requests that change a buy at its seller, as our builders make them, are valid
 * AdCP 3.0.6 requests (the schemas the pinned SDK ships, which SDK-built sellers enforce):
 * `create_media_buy` as buildOperation makes it (each webhook mode, our reporting webhook,
 * a governed buy's plan_id), `update_media_buy` for pause, resume and cancel, and
 * `sync_creatives` for a send and for a corrected creative's resend. Each family also has
 * a broken input the check refuses, so these tests can fail.
 *
 * Reads: request-builders-reads-schema.test.ts; governance: request-builders-governance-schema.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { creativeRejectedRequest } from '../../../src/domain/creative-request.js';
import { initialState } from '../../../src/domain/governed-flow.js';
import type { RecordedAnswer } from '../../../src/domain/input-request.js';
import type { ChangeBus } from '../../../src/engine/change-bus.js';
import type { Clock } from '../../../src/engine/clock.js';
import { CancelService } from '../../../src/engine/cancel-operation.js';
import type { Metrics } from '../../../src/engine/metrics.js';
import type { OperationService } from '../../../src/engine/operation-service.js';
import { CreativeAnswers, type AnswerTools } from '../../../src/engine/media-buys/creative-answers.js';
import { CreativeService } from '../../../src/engine/media-buys/creative-service.js';
import { MediaBuyService } from '../../../src/engine/media-buys/buy-service.js';
import type { WebhookMode } from '../../../src/engine/operation-builder.js';
import type { MediaBuyRow, OperationRow, Store } from '../../../src/store/index.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import {
  ACCOUNT,
  NOW,
  PUBLIC_URL,
  banner,
  buildOptions,
  capturingOperations,
  issuesOf,
  liveBuy,
  pointersOf,
  sealer,
  secrets,
  seller,
  wireRequest,
} from './request-builders-schema.helpers.js';

const clock: Clock = { now: () => NOW, random: () => 0.5 };
const bus = { publish() {}, publishBuy() {} } as unknown as ChangeBus;
const metrics = { transition() {} } as unknown as Metrics;

/** What a caller asks to buy (POST /v1/media-buys). */
const BUY_REQUEST = {
  account: ACCOUNT,
  brand: { domain: 'example-brand.com' },
  start_time: 'asap',
  end_time: '2027-12-31T23:59:59Z',
  po_number: 'PO-2026-0042',
  packages: [{ product_id: 'prod_display', pricing_option_id: 'cpm_usd', budget: 5000 }],
};

describe('create_media_buy as buildOperation makes it', () => {
  it.each<WebhookMode>(['rfc9421', 'hmac', 'bearer', 'none'])('is valid with a %s push_notification_config', (webhook) => {
    const request = wireRequest({ tenantId: 't1', agentId: seller.id, task: 'create_media_buy', params: BUY_REQUEST, webhook, reporting: { frequency: 'daily', auth: 'hmac' } });
    expect(request.idempotency_key).toEqual(expect.any(String));
    expect(request.context).toEqual({ orchestrator_operation_id: expect.any(String) });
    expect(request.push_notification_config === undefined).toBe(webhook === 'none');
    expect(issuesOf('create_media_buy', request)).toEqual([]);
  });

  it.each(['hmac', 'bearer'] as const)('is valid with our %s reporting webhook and a key derived from the client’s', (auth) => {
    const request = wireRequest({ tenantId: 't1', agentId: seller.id, task: 'create_media_buy', params: BUY_REQUEST, clientKey: 'client-key-1', reporting: { frequency: 'hourly', auth } });
    expect(request.reporting_webhook).toMatchObject({ reporting_frequency: 'hourly', authentication: { schemes: [auth === 'hmac' ? 'HMAC-SHA256' : 'Bearer'] } });
    expect(issuesOf('create_media_buy', request)).toEqual([]);
  });

  it('is valid governed: plan_id set, no reporting webhook when the tenant polls governed buys', () => {
    // GovernanceGuard.prepare adds plan_id to a governed create (request-builders-governance-schema.test.ts).
    const governance = initialState({ agent_id: 'agt_gov', plan_id: 'plan_1', target_agent: seller.url, caller: PUBLIC_URL, tool: 'create_media_buy', apply_conditions: false }, NOW);
    for (const reporting of [{ frequency: 'daily', auth: 'hmac' } as const, null]) {
      const request = wireRequest({ tenantId: 't1', agentId: seller.id, task: 'create_media_buy', params: { ...BUY_REQUEST, plan_id: 'plan_1' }, governance, reporting });
      expect(request.plan_id).toBe('plan_1');
      expect(issuesOf('create_media_buy', request)).toEqual([]);
    }
  });

  it('fails the check when a field we add is broken (an RFC 9421 reporting webhook has no authentication)', () => {
    const request = wireRequest({ tenantId: 't1', agentId: seller.id, task: 'create_media_buy', params: BUY_REQUEST, reporting: { frequency: 'daily', auth: 'rfc9421' } });
    expect(pointersOf('create_media_buy', request)).toEqual(['/reporting_webhook/authentication']);
  });
});

describe('update_media_buy', () => {
  function buyService(buy: MediaBuyRow) {
    const { operations, sent } = capturingOperations();
    const store = { mediaBuys: { getForTenant: async () => buy, mutate: async () => ({ outcome: 'noop' }) } } as unknown as Store;
    return { service: new MediaBuyService({ store, operations, bus, clock }), sent };
  }

  it('pause and resume are valid, with and without a client key', async () => {
    const live = buyService(liveBuy({ status: 'active' }));
    await live.service.pause({ tenantId: 't1', buyId: 'buy_1', actor: 'ops' });
    const paused = buyService(liveBuy({ status: 'paused' }));
    await paused.service.resume({ tenantId: 't1', buyId: 'buy_1', actor: 'ops', clientKey: 'resume-1' });
    const sent = [...live.sent, ...paused.sent];
    expect(sent.map((s) => [s.task, s.request.paused])).toEqual([
      ['update_media_buy', true],
      ['update_media_buy', false],
    ]);
    for (const s of sent) expect(issuesOf(s.task, s.request)).toEqual([]);
  });

  /** A completed create_media_buy, as the cancel finds it. */
  function createdRow(request: Record<string, unknown>): OperationRow {
    return newOperationRow(
      { id: 'op_create', tenant_id: 't1', agent_id: seller.id, type: 'create_media_buy', idempotency_key: '0c6f3f0e-8a3b-4f55-9d7e-0d1f7a2b3c4d', request_body: sealer.seal(request), created_at: NOW - 3_600_000 },
      { status: 'completed', result: JSON.stringify({ media_buy_id: 'mb_1', status: 'active' }) },
    );
  }

  async function cancelRequest(reason?: string): Promise<Record<string, unknown>> {
    const row = createdRow(wireRequest({ tenantId: 't1', agentId: seller.id, task: 'create_media_buy', params: BUY_REQUEST, reporting: { frequency: 'daily', auth: 'hmac' } }));
    const { operations, sent } = capturingOperations();
    const store = {
      operations: {
        getForTenant: async () => row,
        childrenOf: async () => [],
        mutate: async (_id: string, _lease: unknown, plan: (r: OperationRow) => { value: unknown }) => ({ outcome: 'applied', row, value: plan(row).value, events: [], notifications: [] }),
      },
    } as unknown as Store;
    const outcome = await new CancelService(store, operations, bus, metrics, clock).cancel({ tenantId: 't1', operationId: row.id, actor: 'ops', ...(reason ? { reason } : {}) });
    expect(outcome.sellerCancel).toBeDefined();
    expect(sent).toHaveLength(1);
    return sent[0]!.request;
  }

  it('cancel is valid: canceled, with the default reason and with a person’s', async () => {
    for (const reason of [undefined, 'The campaign was pulled by the brand.']) {
      const request = await cancelRequest(reason);
      expect(request).toMatchObject({ account: ACCOUNT, media_buy_id: 'mb_1', canceled: true, cancellation_reason: reason ?? 'canceled by ops' });
      expect(issuesOf('update_media_buy', request)).toEqual([]);
    }
  });

  it('cancel is valid with the longest reason the API takes (1000 characters; the schema holds 500)', async () => {
    // Was a bug: the reason went whole, and a seller that validates refuses a cancellation_reason past 500.
    const request = await cancelRequest('🙂'.repeat(1000));
    expect(issuesOf('update_media_buy', request)).toEqual([]);
    expect(Array.from(request.cancellation_reason as string)).toHaveLength(500);
  });

  it('fails the check for a buy whose account is unknown (a buy adopted from the seller’s task list)', async () => {
    // 3.0 update_media_buy requires account: such a pause is refused before anything is stored or sent.
    const { service, sent } = buyService(liveBuy({ account: null }));
    await expect(service.pause({ tenantId: 't1', buyId: 'buy_1', actor: 'ops' })).rejects.toMatchObject({
      code: 'request_invalid',
      details: { issues: [{ pointer: '/account', message: 'is required' }] },
    });
    expect(sent).toEqual([]);
  });
});

describe('sync_creatives', () => {
  it('a send with creatives and assignments is valid', async () => {
    const buy = liveBuy();
    const { operations, sent } = capturingOperations();
    const mediaBuys = { get: async () => buy } as unknown as MediaBuyService;
    const service = new CreativeService({ store: {} as Store, operations, mediaBuys });
    await service.sync({
      tenantId: 't1',
      buyId: buy.id,
      actor: 'ops',
      creatives: [banner('cr_1', 'Spring banner A'), banner('cr_2', 'Spring banner B')],
      assignments: [
        { creative_id: 'cr_1', package_id: 'pkg_1', weight: 60 },
        { creative_id: 'cr_2', package_id: 'pkg_1', weight: 40 },
      ],
      clientKey: 'creatives-1',
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.request).toMatchObject({ account: ACCOUNT, assignments: [{ creative_id: 'cr_1' }, { creative_id: 'cr_2' }] });
    expect(issuesOf('sync_creatives', sent[0]!.request)).toEqual([]);
  });

  it.each<WebhookMode>(['rfc9421', 'hmac', 'none'])('a corrected creative’s resend is valid (parent webhook %s)', async (webhookMode) => {
    const buy = liveBuy();
    const parent = newOperationRow(
      { id: 'op_sync', tenant_id: 't1', agent_id: seller.id, type: 'sync_creatives', idempotency_key: '5a0d2c1e-3b4f-4a6d-8e9f-0a1b2c3d4e5f', request_body: '{}', created_at: NOW - 60_000 },
      { status: 'completed', webhook_mode: webhookMode },
    );
    const request = creativeRejectedRequest([{ creative_id: 'cr_2', name: 'Spring banner B', rejection_reason: 'text covers more than 20% of the image', package_ids: ['pkg_1'] }], { id: buy.id, media_buy_id: buy.media_buy_id }, NOW);
    const recorded: RecordedAnswer = { decision: 'respond', params: { creatives: [banner('cr_2', 'Spring banner B (less text)')] }, actor: 'approver', at: new Date(NOW).toISOString(), kind: 'creative_rejected' };
    const store = { mediaBuys: { getForTenant: async () => buy }, agents: { get: async () => seller } } as unknown as Store;
    const operations = { requests: sealer, options: buildOptions, leaseMs: buildOptions.leaseMs, send: async () => {} } as unknown as OperationService;
    // The answer's own write is the AnswerService's: taken as is here; the child is what it would send.
    const tools: AnswerTools = { take: async () => ({ taken: true, row: parent }), drive: async (child) => child };
    const child = await new CreativeAnswers({ store, secrets, bus, operations, metrics, clock }).answer(parent, recorded, request, tools);
    const resend = sealer.open(child.request_body);
    // Without assignments of its own, the correction goes where the rejected creative was meant to run.
    expect(resend).toMatchObject({ account: ACCOUNT, creatives: [{ creative_id: 'cr_2' }], assignments: [{ creative_id: 'cr_2', package_id: 'pkg_1' }] });
    expect(issuesOf('sync_creatives', resend)).toEqual([]);
  });

  it('fails the check for a creative without its format and assets: refused, nothing stored or sent', async () => {
    const { operations, sent } = capturingOperations();
    const service = new CreativeService({ store: {} as Store, operations, mediaBuys: { get: async () => liveBuy() } as unknown as MediaBuyService });
    await expect(service.sync({ tenantId: 't1', buyId: 'buy_1', actor: 'ops', creatives: [{ creative_id: 'cr_1', name: 'Name only' }] })).rejects.toMatchObject({
      code: 'request_invalid',
      details: { issues: [{ pointer: '/creatives/0/format_id' }, { pointer: '/creatives/0/assets' }] },
    });
    expect(sent).toEqual([]);
  });
});
