/**
 * `adcp-orchestrator media-buys list|show|delivery|refresh|pause|resume`: live
 * media buys through the HTTP API (GET /v1/media-buys[/:id[/delivery]], POST
 * /v1/media-buys/:id/pause|resume|refresh). An id is ours (`buy_…`), not the
 * seller's media_buy_id. The actions print the operation(s) they started; with
 * `--wait` they follow them to their end and print the buy as it then stands
 * (exit 0 when every operation completed and the buy got there, 1 otherwise).
 */
import type { Command } from 'commander';
import { MEDIA_BUY_STATUSES } from '../../domain/media-buy-status.js';
import type { MediaBuyJson } from '../../domain/media-buy-json.js';
import { PACING_STATES } from '../../domain/pacing.js';
import { apiOptions, apiTarget, callApi, type ApiCommandOptions } from '../api-client.js';
import { exitAfterFlush, UsageError } from '../cli-errors.js';
import { buyDetail, buyLine, deliveryLines, type DeliveryView } from '../media-buy-view.js';
import { operationLine, printJson, type OperationView } from '../operation-view.js';
import { waitForBuyOperations } from '../wait-operations.js';

const buyPath = (id: string, rest = '') => `/v1/media-buys/${encodeURIComponent(id)}${rest}`;

interface ListOptions extends ApiCommandOptions {
  status?: string;
  agent?: string;
  campaign?: string;
  pacing?: string;
  limit: string;
  cursor?: string;
}

interface ActionOptions extends ApiCommandOptions {
  wait?: boolean;
  timeout: string;
}

/** The query of GET /v1/media-buys, or a usage error before anything is sent. */
export function listQuery(o: ListOptions): URLSearchParams {
  if (o.status !== undefined && !(MEDIA_BUY_STATUSES as readonly string[]).includes(o.status)) throw new UsageError(`--status must be one of ${MEDIA_BUY_STATUSES.join(', ')} (got '${o.status}')`);
  if (o.pacing !== undefined && !(PACING_STATES as readonly string[]).includes(o.pacing)) throw new UsageError(`--pacing must be one of ${PACING_STATES.join(', ')} (got '${o.pacing}')`);
  const limit = Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError(`--limit must be a whole number from 1 to 500 (got '${o.limit}')`);
  const q = new URLSearchParams({ limit: String(limit) });
  if (o.status) q.set('status', o.status);
  if (o.agent) q.set('agent_id', o.agent);
  if (o.campaign) q.set('campaign_id', o.campaign);
  if (o.pacing) q.set('pacing', o.pacing);
  if (o.cursor) q.set('cursor', o.cursor);
  return q;
}

function timeoutMs(o: ActionOptions): number {
  const seconds = Number(o.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a number of seconds above 0 (got '${o.timeout}')`);
  return seconds * 1000;
}

export function registerMediaBuyCommands(program: Command): void {
  const buys = program.command('media-buys').description('live media buys: status, delivery, pacing; pause, resume and refresh at the seller');

  apiOptions(
    buys
      .command('list')
      .description('list live media buys, newest first: status, spend of budget, pacing, reports')
      .option('--status <status>', `only this status (${MEDIA_BUY_STATUSES.join(', ')})`)
      .option('--agent <id>', "only this seller agent's")
      .option('--campaign <id>', "only this campaign's")
      .option('--pacing <state>', `only this pacing state (${PACING_STATES.join(', ')})`)
      .option('--limit <n>', 'how many (1-500)', '50')
      .option('--cursor <cursor>', 'the next page (next_cursor of the previous one)'),
  ).action(async (o: ListOptions) => {
    const q = listQuery(o);
    const page = await callApi<{ media_buys: MediaBuyJson[]; next_cursor: string | null }>(apiTarget(o), 'GET', `/v1/media-buys?${q}`);
    if (o.json) return printJson(page);
    for (const b of page.media_buys) process.stdout.write(buyLine(b));
    if (page.next_cursor) process.stderr.write(`more: --cursor ${page.next_cursor}\n`);
  });

  apiOptions(buys.command('show <id>').description('a buy: status, flight, spend of budget, pacing, reports, packages, then its events')).action(async (id: string, o: ApiCommandOptions) => {
    const buy = await callApi<MediaBuyJson>(apiTarget(o), 'GET', buyPath(id));
    if (o.json) return printJson(buy);
    process.stdout.write(buyDetail(buy));
  });

  apiOptions(buys.command('delivery <id>').description("a buy's delivery reports, oldest first, and totals counting each period once")).action(async (id: string, o: ApiCommandOptions) => {
    const view = await callApi<DeliveryView>(apiTarget(o), 'GET', buyPath(id, '/delivery'));
    if (o.json) return printJson(view);
    process.stdout.write(deliveryLines(id, view));
  });

  const action = (name: 'pause' | 'resume' | 'refresh', description: string, ready?: (b: MediaBuyJson) => boolean) =>
    apiOptions(
      buys
        .command(`${name} <id>`)
        .description(description)
        .option('--wait', 'follow the operation(s) to their end and print the buy then (exit 0 when they completed)')
        .option('--timeout <seconds>', 'with --wait: give up after this long (exit 1)', '60'),
    ).action(async (id: string, o: ActionOptions) => {
      const wait = o.wait ? timeoutMs(o) : undefined;
      const api = apiTarget(o);
      const answer = await callApi<OperationView | { operations: OperationView[] }>(api, 'POST', buyPath(id, `/${name}`), {});
      const started = 'operations' in answer ? answer.operations : [answer];
      if (wait === undefined) {
        if (o.json) return printJson(answer);
        for (const op of started) process.stdout.write(operationLine(op));
        return;
      }
      if (!o.json) for (const op of started) process.stdout.write(`started  ${operationLine(op)}`);
      // A timeout is an error like any other: one line on standard error, exit 1.
      const done = await waitForBuyOperations(api, { operationIds: started.map((op) => op.id), buyId: id, buyReady: ready }, wait);
      if (o.json) printJson({ operations: done.operations, media_buy: done.buy });
      else {
        for (const op of done.operations) process.stdout.write(`ended    ${operationLine(op)}`);
        process.stdout.write(buyLine(done.buy));
      }
      await exitAfterFlush(done.ok ? 0 : 1);
    });

  action('pause', 'pause the buy at the seller (update_media_buy paused: true); prints the operation', (b) => b.status === 'paused');
  action('resume', 'resume a paused buy at the seller (update_media_buy paused: false); prints the operation', (b) => b.status !== 'paused');
  action('refresh', "read the buy's status and delivery from the seller now (get_media_buys, get_media_buy_delivery); prints both operations");
}
