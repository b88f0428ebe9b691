/**
 * Creatives' reviews on PostgreSQL with two instances sharing the work (README,
 * Creatives): whichever instance claims the buy's creative timer, a rejection is
 * told once and asked once in the inbox (its operation locked before its buy, the
 * order every writer keeps), a correction sent through the other instance is
 * approved, and a review that never comes is stalled once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, SANDBOX_REJECTION_REASON, type SandboxSeller } from '../../src/sandbox/seller.js';
import { creativeWhen, displayCreative, operationWhen } from '../helpers/creatives.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { buyLive, buyNotifications, LIVE_BUY_ENV } from '../helpers/live-buys.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('creatives on PostgreSQL, two instances', () => {
  let database: TestDatabase;
  let seller: SandboxSeller;
  let a: TestOrchestrator;
  let b: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    database = await tempPostgres();
    seller = await startSandboxSeller({ reportClock: false, statusStepMs: 0, creativeReviewMs: 200 });
    const env = { ...LIVE_BUY_ENV, ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '150', ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS: '1500' };
    a = await startOrchestrator({ database, keepDatabase: true, env });
    b = await startOrchestrator({ database, keepDatabase: true, env });
    agentId = await a.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await seller?.close();
    await database?.drop();
  });

  it('a rejection is told and asked once; a correction sent through the other instance is approved; a review that never comes stalls once', async () => {
    const buy = await buyLive(a, agentId);
    const packageId = buy.packages[0].package_id;
    const sent = await a.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_bad', 'Skyscraper (reject)', seller.url), displayCreative('cr_slow', 'Leaderboard (hold)', seller.url)],
      assignments: [
        { creative_id: 'cr_bad', package_id: packageId },
        { creative_id: 'cr_slow', package_id: packageId },
      ],
    });
    expect(sent.status).toBe(202);

    const waiting = await operationWhen(b, sent.body.id, (op) => op.needs_input === true);
    expect(waiting.input_request).toMatchObject({ kind: 'creative_rejected', creative_id: 'cr_bad', rejection_reason: SANDBOX_REJECTION_REASON });
    const answer = await b.api('POST', `/v1/operations/${sent.body.id}/input`, {
      decision: 'respond',
      question_id: waiting.input_request.id,
      params: { creatives: [displayCreative('cr_bad', 'Skyscraper, fixed', seller.url)] },
    });
    expect(answer.status).toBe(202);
    const fixed = await creativeWhen(a, buy.id, 'cr_bad', (c) => c.status === 'approved');
    expect(fixed.sync.operation_id).toBe(answer.body.id);
    const slow = await creativeWhen(a, buy.id, 'cr_slow', (c) => c.stalled === true);
    expect(slow.status).toBe('pending_review');

    // Told once each, whichever instance learnt it; asked once on the operation.
    const rejections = await buyNotifications(a, buy.id, 'creative.rejected');
    expect(rejections, JSON.stringify(rejections.map((n) => n.data.event), null, 1)).toHaveLength(1);
    expect(await buyNotifications(a, buy.id, 'creative.approved')).toHaveLength(1);
    expect(await buyNotifications(a, buy.id, 'creative.stalled')).toHaveLength(1);
    const op = (await a.api('GET', `/v1/operations/${sent.body.id}`)).body;
    expect(op.events.filter((e: any) => e.kind === 'input_requested'), JSON.stringify(op.events, null, 1)).toHaveLength(1);
    expect(op.events.filter((e: any) => e.kind === 'answered')).toHaveLength(1);
    expect(seller.stats().calls.filter((c) => c.tool === 'sync_creatives')).toHaveLength(2);
  });
});
