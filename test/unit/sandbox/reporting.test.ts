/**
 * The sandbox seller's reporting fires without a network: how a
 * reporting_webhook is checked, and what the Reporter hands its sender
 * (sequence numbers, idempotency, forged credentials, body styles) through a
 * recording fake sender. Signatures on the wire are checked against a real
 * receiver in test/integration/sandbox-reporting.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Reporter, type FireRequest } from '../../../src/sandbox/reporting.js';
import { checkReportingWebhook, reportingAuth, type ReportingWebhook } from '../../../src/sandbox/reporting-webhook.js';
import type { WebhookDelivery, WebhookSender } from '../../../src/sandbox/webhook-sender.js';

const CREDENTIALS = 'c'.repeat(32);

describe('checkReportingWebhook', () => {
  it('accepts the three frequencies, HMAC or Bearer or no authentication, and keeps the URL as sent', () => {
    for (const frequency of ['hourly', 'daily', 'monthly']) {
      expect(checkReportingWebhook({ url: 'https://b.example/r/T0K', reporting_frequency: frequency })).toEqual({ url: 'https://b.example/r/T0K', reporting_frequency: frequency });
    }
    const hmac = checkReportingWebhook({ url: 'http://127.0.0.1:1/x', reporting_frequency: 'daily', authentication: { schemes: ['HMAC-SHA256'], credentials: CREDENTIALS }, token: 't'.repeat(16) });
    expect(reportingAuth(hmac as ReportingWebhook)).toEqual({ type: 'hmac_sha256', secret: CREDENTIALS });
    const bearer = checkReportingWebhook({ url: 'http://127.0.0.1:1/x', reporting_frequency: 'daily', authentication: { schemes: ['Bearer'], credentials: CREDENTIALS } });
    expect(reportingAuth(bearer as ReportingWebhook)).toEqual({ type: 'bearer', token: CREDENTIALS });
    expect(reportingAuth({ url: 'http://x', reporting_frequency: 'daily' })).toBeNull();
    expect(checkReportingWebhook(undefined)).toBeUndefined();
  });

  it('refuses what it could not honour, naming the field', () => {
    const base = { url: 'https://b.example/r', reporting_frequency: 'daily' };
    const cases: Array<[unknown, string]> = [
      ['nope', 'reporting_webhook'],
      [{ ...base, url: 'not a url' }, 'reporting_webhook.url'],
      [{ ...base, url: 'ftp://b.example/r' }, 'reporting_webhook.url'],
      [{ ...base, reporting_frequency: 'weekly' }, 'reporting_webhook.reporting_frequency'],
      [{ ...base, token: 'short' }, 'reporting_webhook.token'],
      [{ ...base, requested_metrics: 'spend' }, 'reporting_webhook.requested_metrics'],
      [{ ...base, authentication: { schemes: ['Basic'], credentials: CREDENTIALS } }, 'reporting_webhook.authentication'],
      [{ ...base, authentication: { schemes: ['HMAC-SHA256'], credentials: 'short' } }, 'reporting_webhook.authentication'],
      [{ ...base, authentication: { schemes: ['HMAC-SHA256', 'Bearer'], credentials: CREDENTIALS } }, 'reporting_webhook.authentication'],
    ];
    for (const [raw, field] of cases) expect(checkReportingWebhook(raw), JSON.stringify(raw)).toMatchObject({ code: 'INVALID_REQUEST', field });
  });
});

/** A sender that records what it was handed and answers 204 with a key per eventId, as the SDK emitter does. */
function fakeSender(): WebhookSender & { sent: WebhookDelivery[] } {
  const keys = new Map<string, string>();
  const sent: WebhookDelivery[] = [];
  return {
    sent,
    async deliver(d) {
      sent.push(structuredClone(d));
      if (!keys.has(d.eventId)) keys.set(d.eventId, `evt_${keys.size + 1}_0123456789abcdef`);
      return { idempotency_key: keys.get(d.eventId)!, delivered: true, attempts: 1, final_status: 204, errors: [] };
    },
  };
}

const webhook: ReportingWebhook = {
  url: 'http://127.0.0.1:9/reports',
  reporting_frequency: 'daily',
  token: 'report-token-0123456789',
  authentication: { schemes: ['HMAC-SHA256'], credentials: CREDENTIALS },
};
const row = {
  media_buy_id: 'mb_1',
  status: 'active',
  totals: { impressions: 100, spend: 1, clicks: 0 },
  by_package: [{ package_id: 'p1', spend: 1, impressions: 100, pricing_model: 'cpm', rate: 10, currency: 'USD' }],
};
const fire = (extra: Partial<FireRequest> = {}): FireRequest => ({
  webhook,
  mediaBuyIds: ['mb_1'],
  fields: {
    notification_type: 'scheduled',
    next_expected_at: '2030-01-01T00:00:10.000Z',
    reporting_period: { start: '2030-01-01T00:00:00.000Z', end: '2030-01-02T00:00:00.000Z' },
    rows: [row],
  },
  ...extra,
});

describe('Reporter', () => {
  it('numbers each buy’s fires from 1, a fresh key each; a lost or silenced fire uses its number and sends nothing', async () => {
    const sender = fakeSender();
    const reporter = new Reporter(sender, () => sender, 'bare');
    expect((await reporter.fire(fire())).sequence_number).toBe(1);
    expect(await reporter.fire(fire({ lose: true }))).toMatchObject({ sequence_number: 2, outcome: 'lost' });
    reporter.setSilent('mb_1', true);
    expect(await reporter.fire(fire())).toMatchObject({ sequence_number: 3, outcome: 'silenced' });
    reporter.setSilent('mb_1', false);
    expect((await reporter.fire(fire())).sequence_number).toBe(4);
    expect((await reporter.fire(fire({ mediaBuyIds: ['mb_2'] }))).sequence_number).toBe(1);
    expect(sender.sent.map((d) => d.payload.sequence_number)).toEqual([1, 4, 1]);
    expect(new Set(sender.sent.map((d) => d.eventId)).size).toBe(3);
    expect(sender.sent[0]!.payload).toMatchObject({ notification_type: 'scheduled', token: webhook.token, currency: 'USD', media_buy_deliveries: [row] });
    expect(sender.sent[0]!.auth).toEqual({ type: 'hmac_sha256', secret: CREDENTIALS });
  });

  it('a resend hands the sender the same event and payload (so the same key); a forgery has the wrong secret and no number of its own', async () => {
    const sender = fakeSender();
    const reporter = new Reporter(sender, () => sender, 'bare');
    const first = await reporter.fire(fire());
    const again = (await reporter.resendLast('mb_1'))!;
    expect(again).toMatchObject({ duplicate: true, sequence_number: 1, idempotency_key: first.idempotency_key });
    expect(sender.sent[1]!.eventId).toBe(sender.sent[0]!.eventId);
    expect(sender.sent[1]!.payload).toEqual(sender.sent[0]!.payload);

    const forged = await reporter.fire(fire({ badSignature: true }));
    expect(forged).toMatchObject({ bad_signature: true, sequence_number: 2 });
    expect(sender.sent[2]!.auth).toEqual({ type: 'hmac_sha256', secret: `forged-${CREDENTIALS}` });
    expect((await reporter.fire(fire())).sequence_number).toBe(2);
    // The forgery is not "the last fire": a resend repeats the real one.
    expect((await reporter.resendLast('mb_1'))!.sequence_number).toBe(2);
    expect(await reporter.resendLast('mb_unknown')).toBeUndefined();
  });

  it('forged RFC 9421 fires go through the forger (another key); envelope style wraps the report', async () => {
    const sender = fakeSender();
    const forger = fakeSender();
    const reporter = new Reporter(sender, () => forger, 'envelope');
    const unsigned: ReportingWebhook = { url: webhook.url, reporting_frequency: 'daily' };
    await reporter.fire(fire({ webhook: unsigned, badSignature: true }));
    expect(forger.sent).toHaveLength(1);
    expect(sender.sent).toHaveLength(0);
    const sent = await reporter.fire(fire({ webhook: { ...unsigned, token: webhook.token } }));
    expect(sent.style).toBe('envelope');
    expect(sender.sent[0]!.payload).toMatchObject({
      operation_id: 'reporting_mb_1',
      task_id: 'report_mb_1_1',
      task_type: 'media_buy_delivery',
      status: 'completed',
      token: webhook.token,
      result: { notification_type: 'scheduled', sequence_number: 1, media_buy_deliveries: [row] },
    });
    expect((sender.sent[0]!.payload.result as Record<string, unknown>).token).toBeUndefined();
    reporter.envelopeNext('mb_1');
    expect((await reporter.fire(fire({ style: 'bare' }))).style).toBe('bare');
  });

  it('refuses to send a report off the AdCP schema', async () => {
    const reporter = new Reporter(fakeSender(), () => fakeSender(), 'bare');
    const bad = fire();
    bad.fields.rows = [{ media_buy_id: 'mb_1', status: 'active', totals: { spend: 1 } }];
    await expect(reporter.fire(bad)).rejects.toThrow(/off the AdCP schema.*by_package/);
    expect(reporter.nextSequence('mb_1')).toBe(1);
    expect(reporter.list()).toEqual([]);
  });
});
