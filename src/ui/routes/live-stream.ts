/**
 * GET /live: the dashboard's own event stream, authenticated by the session cookie
 * (EventSource sends cookies, and the page never holds an API key). It tells a page
 * *that* operations changed, not how: the page then re-reads its own region with
 * its own filters, so what it shows is always what the database says.
 *
 * Changes are coalesced: at most one message per `minIntervalMs`, always followed by
 * one for the last change (a trailing send), so a burst costs a page one refresh and
 * the final state is never skipped. Changes that raise no notification (`working`,
 * `calling_adcp`) arrive as wake-ups (see ../live.ts) and are coalesced with the rest.
 * `?operation=<id>` keeps only that operation's changes, `?campaign=<id>` only its
 * buys' (and notifications about no single operation, such as campaign.completed),
 * `?buy=<id>` only one live media buy's, `?buys=1` only live media buys';
 * `?after=<cursor>` (or Last-Event-ID) resumes from where the page was rendered, so a
 * change between render and connect is not missed.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import { writeEventStreamHead } from '../../notify/sse.js';
import type { UiDeps } from '../deps.js';
import type { LiveChange } from '../../notify/live-source.js';
import { requireSession } from '../session.js';

export interface LiveStreamOptions {
  minIntervalMs: number;
  heartbeatMs: number;
}

const CURSOR = /^\d{1,15}$/;
/** Past this many distinct operations in one message, the page is just told "many" (it refreshes all the same). */
const MAX_IDS = 100;

export function liveStreamRoutes(app: FastifyInstance, deps: UiDeps, options: LiveStreamOptions = { minIntervalMs: 250, heartbeatMs: 15_000 }): void {
  app.get('/live', { preHandler: requireSession(deps.store, () => deps.clock.now()) }, async (req, reply) => {
    const auth = req.auth!;
    const token = req.uiSession!.token;
    const q = req.query as { after?: string; operation?: string; campaign?: string; buy?: string; buys?: string };
    const header = req.headers['last-event-id'];
    const given = typeof header === 'string' && CURSOR.test(header.trim()) ? header.trim() : q.after;
    const after = given && CURSOR.test(given) ? Number(given) : await deps.live.position(auth.tenantId);
    const only = typeof q.operation === 'string' && q.operation !== '' ? q.operation : undefined;
    // A campaign's page: its buys' changes and the notifications about no single operation (campaign.completed).
    const campaign = typeof q.campaign === 'string' && q.campaign !== '' && q.campaign.length <= 100 ? await deps.store.campaigns.getForTenant(auth.tenantId, q.campaign) : undefined;
    const buys = campaign ? new Set(JSON.parse(campaign.buy_ids) as string[]) : undefined;
    // A buy's page: changes named by the buy's id (its reports, status, the end of a pause or cancel) or its create's.
    // A buy not found (another tenant's, none) gets nothing, not every change.
    const askedBuy = typeof q.buy === 'string' && q.buy !== '' ? q.buy : undefined;
    const buy = askedBuy && askedBuy.length <= 100 ? await deps.store.mediaBuys.getForTenant(auth.tenantId, askedBuy) : undefined;
    const buyIds = askedBuy ? new Set(buy ? [buy.id, buy.operation_id] : []) : undefined;
    // The media buys page: changes of any buy (named by their `buy_` ids), not of every operation.
    const anyBuy = q.buys === '1';
    const keep = (change: LiveChange): LiveChange => {
      if (only) return { ...change, operationIds: change.operationIds.filter((id) => id === only), other: false };
      if (buys) return { ...change, operationIds: change.operationIds.filter((id) => buys.has(id)) };
      if (buyIds) return { ...change, operationIds: change.operationIds.filter((id) => buyIds.has(id)), other: false };
      if (anyBuy) return { ...change, operationIds: change.operationIds.filter((id) => id.startsWith('buy_')), other: false };
      return change;
    };

    reply.hijack();
    const res = reply.raw;
    writeEventStreamHead(res);
    res.write('retry: 2000\n: connected\n\n');
    const stream = new CoalescingStream(res, options.minIntervalMs);
    // A wake-up moves no position: until a notification arrives, a reconnect resumes from here.
    stream.cursor = after;
    const subscription = deps.live.subscribe(
      auth.tenantId,
      after,
      async (change) => stream.add(keep(change)),
      () => res.end(),
    );
    // The stream outlives no session: checked with each heartbeat, it ends with a last
    // change so the page re-reads, is refused, and goes to the sign-in page.
    const heartbeat = setInterval(() => {
      void deps.store.sessions.lookup(token, deps.clock.now()).then(
        (found) => {
          if (found.state === 'active') return stream.comment('heartbeat');
          stream.add({ cursor: stream.cursor, operationIds: [], other: false }, true);
          stream.flush();
          res.end();
        },
        () => stream.comment('heartbeat'),
      );
    }, options.heartbeatMs);
    heartbeat.unref();
    const cleanup = () => {
      clearInterval(heartbeat);
      stream.close();
      subscription.close();
    };
    req.raw.once('close', cleanup);
    res.once('close', cleanup);
  });
}

class CoalescingStream {
  private pending = new Set<string>();
  private many = false;
  private dirty = false;
  private lastSent = 0;
  private timer: NodeJS.Timeout | undefined;
  cursor = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly minIntervalMs: number,
  ) {}

  /** Takes a change; `force` sends even when no watched operation is in it. */
  add(change: LiveChange, force = false): void {
    this.cursor = Math.max(this.cursor, change.cursor);
    for (const id of change.operationIds) {
      if (this.pending.size >= MAX_IDS) this.many = true;
      else this.pending.add(id);
    }
    // "Many changed" (unnamed) may include the watched operation: re-read rather than miss it.
    if (change.many) this.many = true;
    if (change.operationIds.length === 0 && !change.other && !change.many && !force) return;
    this.dirty = true;
    if (this.timer) return;
    const wait = this.lastSent + this.minIntervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty || this.res.destroyed || this.res.writableEnded) return;
    const data = JSON.stringify({ operations: [...this.pending], many: this.many });
    this.res.write(`event: change\nid: ${this.cursor}\ndata: ${data}\n\n`);
    this.pending = new Set();
    this.many = false;
    this.dirty = false;
    this.lastSent = Date.now();
  }

  comment(text: string): void {
    if (!this.res.destroyed && !this.res.writableEnded) this.res.write(`: ${text}\n\n`);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
