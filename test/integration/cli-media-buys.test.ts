/**
 * `media-buys list|show|delivery|pause|resume|refresh` as child processes against a
 * real `serve --sandbox` (as `npm start` runs it) over loopback: the sandbox seller
 * flies two real buys on its compressed clock and reports them to our reporting
 * webhook, and the CLI shows what the API holds, in lines and as JSON; pause and
 * resume with --wait end with the buy as the seller then says it is; errors are one
 * line with a non-zero exit and change nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli-process.js';
import { eventually } from '../helpers/orchestrator.js';
import { freePort } from '../helpers/ports.js';
import { startSandboxServer, type SandboxServer } from '../helpers/sandbox-server.js';

const DAY = 86_400_000;
// One reporting period every 4 s: a six-period flight is active for about 24 s, long
// enough to pause and resume a buy (on a loaded machine too) while another runs to its end.
const REPORT_INTERVAL_MS = 4000;
const STACK_FRAME = /^\s+at /m;

let s: SandboxServer;
let api: string[];
let longBuy: any; // runs to its end
let pausable: any; // paused and resumed while active

async function buy(budget: number): Promise<any> {
  const created = await s.api(s.adminKey, 'POST', '/v1/media-buys', {
    agent_id: s.sellerId,
    reporting: { frequency: 'daily' },
    request: {
      account: { account_id: 'sandbox_account' },
      brand: { domain: 'example-brand.com' },
      start_time: 'asap',
      end_time: new Date(Date.now() + 6 * DAY).toISOString(),
      packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_std', budget }],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return eventually(async () => {
    const list = await s.api(s.adminKey, 'GET', '/v1/media-buys?limit=500');
    return list.body.media_buys.find((b: any) => b.operation_id === created.body.id);
  }, 30_000);
}

const buyNow = async (id: string) => (await s.api(s.adminKey, 'GET', `/v1/media-buys/${id}`)).body;

beforeAll(async () => {
  s = await startSandboxServer({ ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS: String(REPORT_INTERVAL_MS) });
  api = ['--url', s.serve.url, '--api-key', s.adminKey];
  longBuy = await buy(4000);
}, 90_000);
afterAll(async () => {
  await s?.close();
});

const expectError = (run: CliRun, code: number, message: RegExp) => {
  expect(run.code, run.stdout + run.stderr).toBe(code);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(STACK_FRAME);
};

it('pause --wait and resume --wait end with the buy paused, then active again, as the seller says', async () => {
  // Bought now: its active time starts here.
  pausable = await buy(3000);
  await eventually(async () => ((await buyNow(pausable.id)).status === 'active' ? true : undefined), 30_000);
  const paused = await runCli(['media-buys', 'pause', pausable.id, '--wait', ...api]);
  expect(paused.code, paused.stdout + paused.stderr).toBe(0);
  const lines = paused.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^started  \S+  update_media_buy /);
  expect(lines.at(-2)).toMatch(/^ended    \S+  update_media_buy\s+completed /);
  expect(lines.at(-1)).toMatch(new RegExp(`^${pausable.id}  paused `));
  const after = await buyNow(pausable.id);
  expect(after.status).toBe('paused');
  // The request is on the buy, with who asked.
  expect(after.events.find((e: any) => e.kind === 'pause_requested')?.actor).toMatch(/^sandbox-admin/);

  // Paused already: the API's 409, one line, exit 1.
  expectError(await runCli(['media-buys', 'pause', pausable.id, ...api]), 1, /^error: already_paused: media buy \S+ is already paused$/m);

  const resumed = await runCli(['media-buys', 'resume', pausable.id, '--wait', '--json', ...api]);
  expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
  const body = JSON.parse(resumed.stdout);
  expect(body.operations.map((o: any) => [o.type, o.status])).toEqual([['update_media_buy', 'completed']]);
  expect(body.media_buy.id).toBe(pausable.id);
  expect(body.media_buy.status).toBe('active');
  expect((await buyNow(pausable.id)).status).toBe('active');
}, 90_000);

it('refresh prints the two reads it started; they end completed, children of the buy', async () => {
  const run = await runCli(['media-buys', 'refresh', longBuy.id, ...api]);
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines.map((l) => l.split(/\s+/)[1])).toEqual(['get_media_buys', 'get_media_buy_delivery']);
  for (const line of lines) {
    const id = line.split(/\s+/)[0]!;
    const op = await eventually(async () => {
      const o = (await s.api(s.adminKey, 'GET', `/v1/operations/${id}`)).body;
      return o.status === 'completed' ? o : undefined;
    });
    expect(op.parent_id).toBe(longBuy.operation_id);
  }
}, 30_000);

it('list, show and delivery print what the API holds: status, spend of budget, pacing, each period once', async () => {
  // The long buy runs to its final report.
  const ended = await eventually(async () => {
    const b = await buyNow(longBuy.id);
    return b.reports.final_received ? b : undefined;
  }, 45_000);
  expect(ended.status).toBe('completed');

  const delivery = (await s.api(s.adminKey, 'GET', `/v1/media-buys/${longBuy.id}/delivery`)).body;
  const shown = await runCli(['media-buys', 'delivery', longBuy.id, ...api]);
  expect(shown.code, shown.stderr).toBe(0);
  const lines = shown.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(delivery.reports.length + 1);
  // The fires, and the refresh's read of the seller's cumulative figure (a `snapshot`, source poll).
  expect(delivery.reports.filter((r: any) => r.source === 'webhook')).toHaveLength(ended.reports.received);
  delivery.reports.forEach((r: any, i: number) => {
    const seq = r.sequence_number === null ? '-' : `#${r.sequence_number}`;
    expect(lines[i]).toContain(`${r.period.start} -> ${r.period.end}`);
    expect(lines[i]).toMatch(new RegExp(`  ${r.notification_type}\\s+${seq}\\s+${r.impressions} imp\\s+${r.spend.toFixed(2)} USD  ${r.source}$`));
  });
  expect(lines.filter((l) => / final +#\d+ /.test(l))).toHaveLength(1);
  // The sandbox's last period lands on the budget: every period counted once adds up to it.
  expect(delivery.totals.spend).toBeCloseTo(4000, 2);
  expect(lines.at(-1)).toBe(`totals ${longBuy.id}: ${delivery.totals.periods} periods, ${delivery.totals.impressions} impressions, spend 4000.00 USD, ${delivery.totals.clicks} clicks, through ${delivery.totals.through}`);
  const asJson = await runCli(['media-buys', 'delivery', longBuy.id, '--json', ...api]);
  expect(JSON.parse(asJson.stdout)).toEqual(delivery);

  const show = await runCli(['media-buys', 'show', longBuy.id, ...api]);
  expect(show.code, show.stderr).toBe(0);
  expect(show.stdout).toMatch(new RegExp(`^${longBuy.id}  completed\\s+4000\\.00 / 4000\\.00 USD \\(100%\\)\\s+pacing on_track 1\\.00\\s+${ended.reports.received} reports, last #${ended.reports.last_sequence}, final in  agent ${s.sellerId}  seller id ${longBuy.media_buy_id}\\n`));
  expect(show.stdout).toMatch(/^ {2}reports {3}daily by hmac: /m);
  expect(show.stdout).toMatch(/^ {2}package {2}\S+ {2}sandbox_instant, budget 4000\.00, completed/m);
  expect(show.stdout).toMatch(/ report_received .* webhook {2}notification_type=final /);
  expect(show.stdout).toMatch(/ status_changed +active -> completed +webhook/);

  // Filters and pages, as the API answers them.
  const completed = await runCli(['media-buys', 'list', '--status', 'completed', ...api]);
  expect(completed.stdout).toContain(`${longBuy.id}  completed `);
  for (const line of completed.stdout.trimEnd().split('\n')) expect(line).toMatch(/^\S+  completed /);
  const first = await runCli(['media-buys', 'list', '--limit', '1', '--agent', s.sellerId, ...api]);
  expect(first.stdout.trimEnd().split('\n')).toHaveLength(1);
  const cursor = /^more: --cursor (\S+)$/m.exec(first.stderr)?.[1];
  expect(cursor).toBeDefined();
  const second = await runCli(['media-buys', 'list', '--limit', '1', '--agent', s.sellerId, '--cursor', cursor!, ...api]);
  const ids = [first.stdout, second.stdout].map((o) => o.split(/\s+/)[0]);
  expect(new Set(ids)).toEqual(new Set([longBuy.id, pausable.id]));
  const page = JSON.parse((await runCli(['media-buys', 'list', '--json', ...api])).stdout);
  expect(page).toEqual((await s.api(s.adminKey, 'GET', '/v1/media-buys?limit=50')).body);
  const none = await runCli(['media-buys', 'list', '--campaign', 'no-such-campaign', ...api]);
  expect([none.code, none.stdout]).toEqual([0, '']);

  // An ended buy cannot be paused.
  expectError(await runCli(['media-buys', 'pause', longBuy.id, ...api]), 1, /^error: media_buy_ended: media buy \S+ is completed: it can no longer be changed$/m);
}, 90_000);

it('refuses clearly: an unknown buy, a role that may not act, bad usage (nothing sent)', async () => {
  expectError(await runCli(['media-buys', 'show', 'buy_nope', ...api]), 1, /^error: media_buy_not_found: media buy buy_nope not found$/m);
  expectError(await runCli(['media-buys', 'delivery', 'buy_nope', ...api]), 1, /^error: media_buy_not_found: /m);

  const viewer = await s.createKey('cli-viewer', 'viewer');
  const asViewer = ['--url', s.serve.url, '--api-key', viewer];
  const requests = async () => (await buyNow(pausable.id)).events.filter((e: any) => e.kind.endsWith('_requested')).length;
  const before = await requests();
  expectError(await runCli(['media-buys', 'pause', pausable.id, ...asViewer]), 1, /^error: forbidden: .*operator/m);
  expectError(await runCli(['media-buys', 'refresh', pausable.id, ...asViewer]), 1, /^error: forbidden: /m);
  // Nothing was asked of the seller (the buy's own reports go on meanwhile).
  expect(await requests()).toBe(before);
  // A viewer reads.
  const read = await runCli(['media-buys', 'show', pausable.id, ...asViewer]);
  expect(read.code, read.stderr).toBe(0);

  // Bad usage exits 2 before anything is sent: pointed at a closed port, a request would fail with exit 1.
  const closed = ['--url', `http://127.0.0.1:${await freePort()}`, '--api-key', 'aok_unused'];
  const [status, pacing, limit, timeout, noId] = await Promise.all([
    runCli(['media-buys', 'list', '--status', 'live', ...closed]),
    runCli(['media-buys', 'list', '--pacing', 'fast', ...closed]),
    runCli(['media-buys', 'list', '--limit', '0', ...closed]),
    runCli(['media-buys', 'pause', 'buy_x', '--wait', '--timeout', 'soon', ...closed]),
    runCli(['media-buys', 'show', ...closed]),
  ]);
  expectError(status, 2, /^error: --status must be one of pending_creatives, pending_start, active, paused, completed, rejected, canceled \(got 'live'\)$/m);
  expectError(pacing, 2, /^error: --pacing must be one of on_track, under, over, not_started \(got 'fast'\)$/m);
  expectError(limit, 2, /^error: --limit must be a whole number from 1 to 500/m);
  expectError(timeout, 2, /^error: --timeout must be a number of seconds/m);
  expectError(noId, 2, /missing required argument 'id'/);
}, 90_000);
