/**
 * `adcp-orchestrator subscriptions add|list|deliveries`, through the HTTP API:
 * outbound notifications to a URL, signed per Standard Webhooks (docs/ARCHITECTURE.md, Telling users).
 *
 * The subscriber's URL is an argument, not `--url`: on every command that talks
 * to the API `--url` already means the orchestrator's own address.
 */
import type { Command } from 'commander';
import { isNotificationType, NOTIFICATION_TYPES } from '../../domain/notification-types.js';
import { apiOptions, apiTarget, callApi, type ApiCommandOptions } from '../api-client.js';
import { UsageError } from '../cli-errors.js';
import { printJson } from '../operation-view.js';

interface SubscriptionView {
  id: string;
  url: string;
  events: string[] | null;
  format: string;
  status: string;
  created_at: string;
  created_by?: string | null;
  disabled_reason?: string | null;
}

interface DeliveryView {
  id: string;
  notification_id: string;
  type: string;
  operation_id: string | null;
  status: string;
  attempt_count: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

const FORMATS = ['standard', 'slack'] as const;
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

const subscriptionLine = (s: SubscriptionView) =>
  `${s.id}  ${s.status.padEnd(8)} ${s.format.padEnd(8)} ${(s.events ?? ['all']).join(',')}  ${s.url}${s.created_by ? `  by ${s.created_by}` : ''}${s.disabled_reason ? `  (${s.disabled_reason})` : ''}\n`;

const deliveryLine = (d: DeliveryView) => {
  const last = d.last_status !== null ? `HTTP ${d.last_status}` : (d.last_error ?? '-');
  const next = d.next_attempt_at ? `  next ${d.next_attempt_at}` : '';
  return `${d.created_at}  ${d.id}  ${d.type.padEnd(24)} ${d.status.padEnd(9)} attempts ${d.attempt_count}  ${last}  ${d.notification_id}${d.operation_id ? `  ${d.operation_id}` : ''}${next}\n`;
};

export function registerSubscriptionCommands(program: Command): void {
  const subs = program.command('subscriptions').description('outbound webhooks of notifications (Standard Webhooks, or Slack)');

  apiOptions(
    subs
      .command('add <webhook-url>')
      .description('subscribe a URL to notifications; prints the id, then the signing secret (shown once) alone on the last line')
      .option('--events <types>', `comma-separated notification types (default all): ${NOTIFICATION_TYPES.join(', ')}`)
      .option('--format <format>', FORMATS.join(' | '), 'standard'),
  ).action(async (webhookUrl: string, o: ApiCommandOptions & { events?: string; format: string }) => {
    const body = subscriptionBody(webhookUrl, o);
    const created = await callApi<SubscriptionView & { secret: string }>(apiTarget(o), 'POST', '/v1/subscriptions', body);
    if (o.json) return printJson(created);
    process.stdout.write(subscriptionLine(created));
    process.stderr.write('signing secret (shown once, stored sealed):\n');
    process.stdout.write(`${created.secret}\n`);
  });

  apiOptions(subs.command('list').description('list subscriptions (never their secrets)')).action(async (o: ApiCommandOptions) => {
    const res = await callApi<{ subscriptions: SubscriptionView[] }>(apiTarget(o), 'GET', '/v1/subscriptions');
    if (o.json) return printJson(res);
    for (const s of res.subscriptions) process.stdout.write(subscriptionLine(s));
  });

  apiOptions(
    subs
      .command('deliveries <id>')
      .description("a subscription's deliveries, newest first, with their status and attempts")
      .option('--status <status>', DELIVERY_STATUSES.join(' | '))
      .option('--limit <n>', 'how many', '50')
      .option('--cursor <cursor>', 'the next page (next_cursor of the previous one)'),
  ).action(async (id: string, o: ApiCommandOptions & { status?: string; limit: string; cursor?: string }) => {
    if (o.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(o.status)) {
      throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')} (got '${o.status}')`);
    }
    const q = new URLSearchParams({ limit: o.limit });
    if (o.status) q.set('status', o.status);
    if (o.cursor) q.set('cursor', o.cursor);
    const page = await callApi<{ deliveries: DeliveryView[]; next_cursor: string | null }>(apiTarget(o), 'GET', `/v1/subscriptions/${encodeURIComponent(id)}/deliveries?${q}`);
    if (o.json) return printJson(page);
    for (const d of page.deliveries) process.stdout.write(deliveryLine(d));
    if (page.next_cursor) process.stderr.write(`more: --cursor ${page.next_cursor}\n`);
  });
}

/** The body of POST /v1/subscriptions, or a usage error before anything is sent. */
export function subscriptionBody(url: string, o: { events?: string; format: string }): { url: string; events?: string[]; format: string } {
  if (!(FORMATS as readonly string[]).includes(o.format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')} (got '${o.format}')`);
  if (o.events === undefined) return { url, format: o.format };
  const events = o.events.split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (events.length === 0) throw new UsageError('--events needs at least one notification type (leave it out for all)');
  const unknown = events.filter((e) => !isNotificationType(e));
  if (unknown.length > 0) throw new UsageError(`unknown notification type(s) in --events: ${unknown.join(', ')} (known: ${NOTIFICATION_TYPES.join(', ')})`);
  return { url, events, format: o.format };
}
