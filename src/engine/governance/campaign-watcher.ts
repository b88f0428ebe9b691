/**
 * Marks a campaign done, once, and tells people (`campaign.completed`): when a
 * change to one of its buys is seen here (the change bus), and by a sweep of
 * the campaigns still running (so a change made by another instance, or just
 * before a crash, is noticed too). Marking it done and writing its
 * notification are one commit, guarded by the row still being `running`, so
 * several instances looking at once write it once.
 */
import type { Logger } from 'pino';
import { campaignCompletedBody, campaignStatus } from '../../domain/campaign.js';
import type { NotificationRow, Store } from '../../store/index.js';
import { newNotificationId } from '../../store/notifications-repo.js';
import { inWriteTransaction } from '../../store/tx.js';
import type { ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import type { DatabaseOutage } from '../database-outage.js';
import { buysOf } from './campaigns.js';

export interface CampaignWatcherOptions {
  /** How often running campaigns are looked at without a local change. */
  sweepEveryMs: number;
  /** Notifications link to the campaign's page. */
  publicUrl?: string;
  /** The database's absence: counted and logged once per outage; the next sweep looks again. */
  outage?: DatabaseOutage;
}

export class CampaignWatcher {
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly due = new Set<string>();
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly bus: ChangeBus,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: CampaignWatcherOptions,
  ) {}

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.bus.subscribe(({ operation, events }) => {
      if (operation.parent_id?.startsWith('cmp_') && events.length > 0) this.look(operation.parent_id);
    });
    this.timer = setInterval(() => void this.sweep(), this.options.sweepEveryMs);
    this.timer.unref();
    void this.sweep();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.timer);
    await this.flushing;
  }

  private look(campaignId: string): void {
    this.due.add(campaignId);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  private async flush(): Promise<void> {
    try {
      while (this.due.size > 0) {
        const [id] = this.due;
        this.due.delete(id!);
        await this.settle(id!);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async sweep(): Promise<void> {
    try {
      for (const c of await this.store.campaigns.running(200)) this.look(c.id);
    } catch (err) {
      if (!this.options.outage?.failed('campaigns', err)) this.log.error({ err }, 'looking at running campaigns failed; trying again later');
    }
  }

  /** Done when every buy has ended and every outcome is settled: marked, and told, once. */
  async settle(campaignId: string): Promise<boolean> {
    try {
      const campaign = await this.store.campaigns.get(campaignId);
      if (!campaign || campaign.status !== 'running') return false;
      const buys = await buysOf(this.store, campaign);
      if (buys.length === 0 || campaignStatus(buys) !== 'done') return false;
      const now = this.clock.now();
      const id = newNotificationId();
      const body = campaignCompletedBody({ id, tenantId: campaign.tenant_id, createdAt: now, publicUrl: this.options.publicUrl }, campaign, buys);
      const written = await inWriteTransaction(this.store.db, async (trx): Promise<NotificationRow[]> => {
        if (!(await this.store.campaigns.markDoneIn(trx, campaignId, now))) return [];
        return this.store.notifications.insertIn(trx, [{ id, tenant_id: campaign.tenant_id, type: 'campaign.completed', operation_id: null, created_at: now, body: JSON.stringify(body) }]);
      });
      if (written.length === 0) return false;
      // Local streams are fed from the bus; the change carries the notification, not an operation event.
      this.bus.publish({ operation: buys[buys.length - 1]!, events: [], notifications: written });
      this.log.info({ campaign_id: campaignId, ...body.data.campaign.summary }, 'campaign done');
      return true;
    } catch (err) {
      if (this.options.outage?.failed('campaigns', err)) return false;
      this.log.error({ err, campaign_id: campaignId }, 'settling a campaign failed; the sweep tries again');
      return false;
    }
  }
}
