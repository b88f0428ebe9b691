/**
 * Delivery report fires to a buy's `reporting_webhook`, written from the spec
 * rather than with any helper of ours or the SDK's, so they check the buyer's
 * receiver independently:
 *
 * - body: the `get_media_buy_delivery` response for the period just delivered,
 *   plus the webhook fields `notification_type` ("scheduled", or "final" once
 *   the buy has ended), `sequence_number` (1, 2, …) and `next_expected_at`
 *   (absent on "final"), and the buyer's `token` when it gave one. It is checked
 *   against the get_media_buy_delivery response schema before it is sent.
 * - authentication, as the buyer registered it: `HMAC-SHA256` signs
 *   `"{X-ADCP-Timestamp}.{raw body}"` with the shared secret, sent as
 *   `X-ADCP-Signature: sha256=<hex>` with `X-ADCP-Timestamp: <unix seconds>`;
 *   `Bearer` sends the credentials in `Authorization`.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { CURRENCY } from './catalog.js';
import { packageDelivery, type BookedBuy, type MediaBuyBook } from './media-buys.js';
import { assertValidResponse } from './schema.js';

type Json = Record<string, unknown>;

const ENDED = new Set(['completed', 'canceled', 'rejected']);

export interface FireRecord {
  media_buy_id: string;
  sequence_number: number;
  notification_type: string;
  body: Json;
  /** The receiver's HTTP status. */
  status: number;
  response: string;
}

export class Reporter {
  private readonly fires: FireRecord[] = [];

  constructor(
    private readonly book: MediaBuyBook,
    /** When the next report is due after one is sent. */
    private readonly intervalMs: number,
  ) {}

  /** Delivers the buy's next period and reports it; resolves with the receiver's answer. */
  async fire(mediaBuyId: string): Promise<FireRecord> {
    const buy = this.book.get(mediaBuyId);
    if (!buy) throw new Error(`sdk-seller: no media buy ${mediaBuyId}`);
    if (!buy.reporting) throw new Error(`sdk-seller: media buy ${mediaBuyId} has no reporting_webhook`);
    const period = this.book.deliverPeriod(buy);
    buy.reportsSent += 1;
    const final = ENDED.has(buy.status);
    const rows = period.packages;
    const totals = { impressions: sum(rows, 'impressions'), spend: round2(sum(rows, 'spend')), clicks: sum(rows, 'clicks') };
    const body: Json = {
      notification_type: final ? 'final' : 'scheduled',
      sequence_number: buy.reportsSent,
      ...(final ? {} : { next_expected_at: new Date(period.end + this.intervalMs).toISOString() }),
      reporting_period: { start: new Date(period.start).toISOString(), end: new Date(period.end).toISOString() },
      currency: CURRENCY,
      media_buy_deliveries: [{ media_buy_id: buy.media_buy_id, status: buy.status, pricing_model: 'cpm', totals, by_package: rows.map(packageDelivery) }],
      ...(buy.reporting.token ? { token: buy.reporting.token } : {}),
      idempotency_key: randomUUID(),
    };
    assertValidResponse('get_media_buy_delivery', body);
    const raw = JSON.stringify(body);
    const res = await fetch(buy.reporting.url, { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders(buy, raw) }, body: raw });
    const record: FireRecord = { media_buy_id: buy.media_buy_id, sequence_number: buy.reportsSent, notification_type: String(body.notification_type), body, status: res.status, response: await res.text() };
    this.fires.push(record);
    return record;
  }

  records(mediaBuyId?: string): FireRecord[] {
    return this.fires.filter((f) => mediaBuyId === undefined || f.media_buy_id === mediaBuyId);
  }
}

function authHeaders(buy: BookedBuy, raw: string): Record<string, string> {
  const target = buy.reporting!;
  if (target.scheme === 'Bearer') return { authorization: `Bearer ${target.credentials}` };
  const timestamp = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', target.credentials).update(`${timestamp}.${raw}`, 'utf8').digest('hex');
  return { 'x-adcp-timestamp': timestamp, 'x-adcp-signature': `sha256=${mac}` };
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const sum = (rows: Array<Record<string, unknown>>, key: string): number => rows.reduce((s, r) => s + Number(r[key] ?? 0), 0);
