/**
 * Sending delivery reports to a buy's `reporting_webhook` ("fires").
 *
 * Each buy has its own sequence (1, 2, …, continuing if the webhook is
 * replaced). Each fire is one logical delivery with a fresh
 * `idempotency_key`; the sender retries it (5xx, 429, network errors) with
 * the same bytes and key, and a deliberate duplicate reuses both too.
 * Authentication follows the webhook's `authentication`: legacy HMAC
 * (`X-ADCP-Signature: sha256=<hex>` over `"{X-ADCP-Timestamp}.{body}"`),
 * Bearer, or RFC 9421 with the seller's key when it is absent.
 *
 * Test faults live here: a lost fire (its sequence number used up, nothing
 * sent), a silenced buy, a resend of the last fire, a badly signed fire
 * (which uses no sequence number: a forgery, not a report), and the 3.1
 * envelope for one fire.
 */
import { authName, reportingAuth, type ReportingWebhook } from './reporting-webhook.js';
import { bareReport, envelopeReport, type ReportBodyStyle, type ReportFields } from './report-body.js';
import { assertValid31Document } from './replies-31.js';
import { assertValidAdcpReply } from './sdk-validator.js';
import type { SellerVersion } from './versions.js';
import type { WebhookAuth, WebhookSender } from './webhook-sender.js';

/** One fire, as `stats().reportFires` shows it. */
export interface FireRecord {
  /** 1-based, over the whole seller, in the order fires were made. */
  fire: number;
  /** The buys its rows name (the first is the buy whose webhook it went to). */
  media_buy_ids: string[];
  url: string;
  notification_type: string;
  sequence_number: number;
  reporting_period: { start: string; end: string };
  style: ReportBodyStyle;
  auth: 'hmac' | 'bearer' | 'rfc9421';
  /** sent: delivered or attempted; lost: sequence number used, nothing sent; silenced: the buy was silenced. */
  outcome: 'sent' | 'lost' | 'silenced';
  bad_signature: boolean;
  /** A resend of an earlier fire (same body, same idempotency_key). */
  duplicate: boolean;
  idempotency_key?: string;
  delivered: boolean;
  attempts: number;
  /** The receiver's last HTTP status. */
  final_status?: number;
  errors: string[];
  /** The body sent, `idempotency_key` included. */
  body: Record<string, unknown>;
  at: string;
}

export interface FireRequest {
  webhook: ReportingWebhook;
  mediaBuyIds: string[];
  fields: Omit<ReportFields, 'sequence_number' | 'token'>;
  style?: ReportBodyStyle;
  /** Send it as a forgery: a wrong signature or credential, no sequence number used. */
  badSignature?: boolean;
  /** Use up the sequence number and send nothing (a report lost on the way). */
  lose?: boolean;
  /** Envelope fields other than the reporting stream's own (a report sent to an operation's webhook). */
  envelope?: { operation_id?: string; task_id?: string; task_type?: string };
}

interface BuyReporting {
  sequence: number;
  silent: boolean;
  envelopeNext: boolean;
  last?: { eventId: string; payload: Record<string, unknown>; url: string; auth: WebhookAuth; record: FireRecord };
}

export class Reporter {
  private readonly buys = new Map<string, BuyReporting>();
  private readonly records: FireRecord[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private fires = 0;

  constructor(
    private readonly sender: WebhookSender,
    /** A sender whose RFC 9421 key the buyer does not know, for badly signed fires. */
    private readonly forger: () => WebhookSender,
    private readonly defaultStyle: ReportBodyStyle,
    /** The version the seller speaks: a 3.1 seller's envelopes are checked as 3.1 webhook payloads too. */
    private readonly version: SellerVersion = '3.0',
  ) {}

  private state(mediaBuyId: string): BuyReporting {
    let s = this.buys.get(mediaBuyId);
    if (!s) this.buys.set(mediaBuyId, (s = { sequence: 0, silent: false, envelopeNext: false }));
    return s;
  }

  /** The sequence number the buy's next report will carry. */
  nextSequence(mediaBuyId: string): number {
    return this.state(mediaBuyId).sequence + 1;
  }

  setSilent(mediaBuyId: string, silent: boolean): void {
    this.state(mediaBuyId).silent = silent;
  }

  isSilent(mediaBuyId: string): boolean {
    return this.state(mediaBuyId).silent;
  }

  /** The buy's next fire goes out in the 3.1 envelope style, whatever the default. */
  envelopeNext(mediaBuyId: string): void {
    this.state(mediaBuyId).envelopeNext = true;
  }

  /** Makes, records and (unless lost or silenced) sends a fire; resolves once the receiver has answered or retries ran out. */
  async fire(req: FireRequest): Promise<FireRecord> {
    const owner = req.mediaBuyIds[0];
    if (owner === undefined) throw new Error('a fire names at least one buy');
    const s = this.state(owner);
    const sequence = s.sequence + 1;
    const style = req.style ?? (s.envelopeNext ? 'envelope' : this.defaultStyle);
    const fields: ReportFields = {
      ...req.fields,
      sequence_number: sequence,
      ...(req.webhook.token !== undefined && { token: req.webhook.token }),
    };
    const at = new Date().toISOString();
    const payload =
      style === 'envelope'
        ? envelopeReport(fields, { operation_id: `reporting_${owner}`, task_id: `report_${owner}_${sequence}`, ...req.envelope }, at)
        : bareReport(fields);
    // Fires are checked like replies: the report is a get_media_buy_delivery response plus webhook fields.
    assertValidAdcpReply('sandbox seller', 'get_media_buy_delivery', (style === 'envelope' ? payload.result : payload) as Record<string, unknown>);
    // The sender adds the idempotency_key; a stand-in of its form takes its place in the check.
    if (style === 'envelope' && this.version === '3.1') assertValid31Document('report fire', 'core/mcp-webhook-payload.json', { idempotency_key: 'stand_in_key_00000000', ...payload });
    // A forgery is not one of the buy's reports: it uses no sequence number.
    if (!req.badSignature) {
      s.sequence = sequence;
      s.envelopeNext = false;
    }
    const fire = ++this.fires;
    const auth = reportingAuth(req.webhook);
    const record: FireRecord = {
      fire,
      media_buy_ids: [...req.mediaBuyIds],
      url: req.webhook.url,
      notification_type: req.fields.notification_type,
      sequence_number: sequence,
      reporting_period: req.fields.reporting_period,
      style,
      auth: authName(auth),
      outcome: req.lose ? 'lost' : s.silent && !req.badSignature ? 'silenced' : 'sent',
      bad_signature: req.badSignature === true,
      duplicate: false,
      delivered: false,
      attempts: 0,
      errors: [],
      body: payload,
      at,
    };
    this.records.push(record);
    if (record.outcome !== 'sent') return structuredClone(record);
    const eventId = `report:${owner}:${fire}`;
    if (!req.badSignature) s.last = { eventId, payload, url: req.webhook.url, auth, record };
    return this.deliver(record, { eventId, payload, url: req.webhook.url, auth }, req.badSignature === true);
  }

  /** Sends the buy's last fire again: same body, same idempotency_key. Undefined if it has none. */
  async resendLast(mediaBuyId: string): Promise<FireRecord | undefined> {
    const last = this.state(mediaBuyId).last;
    if (!last) return undefined;
    const record: FireRecord = {
      ...structuredClone(last.record),
      fire: ++this.fires,
      duplicate: true,
      delivered: false,
      attempts: 0,
      errors: [],
      at: new Date().toISOString(),
    };
    delete record.final_status;
    this.records.push(record);
    return this.deliver(record, last, false);
  }

  private async deliver(
    record: FireRecord,
    d: { eventId: string; payload: Record<string, unknown>; url: string; auth: WebhookAuth },
    forged: boolean,
  ): Promise<FireRecord> {
    const sender = forged && d.auth === null ? this.forger() : this.sender;
    const p = (async () => {
      try {
        const r = await sender.deliver({ url: d.url, payload: d.payload, eventId: d.eventId, auth: forged ? wrongCredential(d.auth) : d.auth });
        record.idempotency_key = r.idempotency_key;
        record.body = { ...d.payload, idempotency_key: r.idempotency_key };
        record.delivered = r.delivered;
        record.attempts = r.attempts;
        if (r.final_status !== undefined) record.final_status = r.final_status;
        record.errors = r.errors;
      } catch (err) {
        record.errors = [err instanceof Error ? err.message : String(err)];
      }
    })();
    const tracked = p.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    await tracked;
    return structuredClone(record);
  }

  /** Every fire so far (lost, silenced, forged and duplicate ones included), optionally for one buy. */
  list(mediaBuyId?: string): FireRecord[] {
    return structuredClone(mediaBuyId === undefined ? this.records : this.records.filter((r) => r.media_buy_ids.includes(mediaBuyId)));
  }

  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}

/** The same scheme with a credential the buyer never issued (RFC 9421 forgeries use another key instead). */
function wrongCredential(auth: WebhookAuth): WebhookAuth {
  if (auth === null) return null;
  if (auth.type === 'hmac_sha256') return { type: 'hmac_sha256', secret: `forged-${auth.secret}` };
  return { type: 'bearer', token: `forged-${auth.token}` };
}
