/**
 * The demo's script: sync a plan, run a governed campaign of four buys across
 * two sandbox sellers (A speaks AdCP 3.0, B 3.1), and print what happens as it happens:
 *   1. seller A, an instant buy: approved, bought (its product under-delivers,
 *      so its delivered spend ends below what was committed);
 *   2. seller B, a buy running past the plan's flight: the governance agent
 *      approves on conditions, a person must decide (the demo answers as that
 *      person, with a key of its own, and says so);
 *   3. seller A, a buy the seller queues (`submitted`) and completes later by
 *      a signed webhook;
 *   4. seller B, a buy targeting a country outside the plan: denied, never sent.
 * Live lines come from the tenant's event stream (GET /v1/events) and from the
 * campaign's governance state (GET /v1/campaigns/:id); the summary shows the
 * budget committed, checked against the governance agent's own ledger. Then buy 1
 * gets two creatives: the seller rejects one, the demo corrects it as the person
 * would, and the seller approves the correction (creatives-step.ts). The
 * three buys fly on the sandbox's compressed clock and report their delivery;
 * the demo ends with the campaign's delivered spend checked against the sellers'
 * own figures and the governance agent's ledger of delivery (delivery-check.ts).
 */
import { callApi, type ApiTarget } from '../api-client.js';
import { followEvents, type Notification } from '../event-stream.js';
import { runCreativesStep } from './creatives-step.js';
import { checkDelivery } from './delivery-check.js';
import type { DemoStack } from './demo-stack.js';
import { shortId, sleep, type DemoStepInput } from './demo-step.js';

export interface DemoOutput {
  line(text: string): void;
}

interface Buy {
  label: string;
  seller: number;
  product: string;
  budget: number;
  extra?: Record<string, unknown>;
  packageExtra?: Record<string, unknown>;
}

const DAY = 86_400_000;
const PLAN_ID = 'plan_demo_launch';

export async function runDemo(stack: DemoStack, out: DemoOutput, timeoutMs = 50_000): Promise<boolean> {
  const started = Date.now();
  const at = () => `+${((Date.now() - started) / 1000).toFixed(1).padStart(4)}s`;
  const say = (text: string) => out.line(`${at()}  ${text}`);
  const op = stack.operator;
  const now = Date.now();
  const flightEnd = new Date(now + 365 * DAY).toISOString();
  const sellerUrls = stack.sellers.map((s) => s.agent.url);

  say(`orchestrator ${op.url}; sellers ${stack.sellers.map((s) => `${s.name} (AdCP ${s.adcpVersion})`).join(', ')}; governance agent ${stack.governance.url}`);
  const sync = await callApi<{ id: string }>(op, 'POST', '/v1/plans', {
    agent_id: stack.governanceId,
    plans: [
      {
        plan_id: PLAN_ID,
        brand: { domain: 'example-brand.com' },
        objectives: 'Demo launch: awareness in the US across two sellers',
        budget: { total: 50_000, currency: 'USD', reallocation_threshold: 5_000 },
        flight: { start: new Date(now - 30 * DAY).toISOString(), end: flightEnd },
        countries: ['US'],
        approved_sellers: sellerUrls,
      },
    ],
  });
  await until(async () => ((await callApi<{ status: string }>(op, 'GET', `/v1/operations/${sync.id}`)).status === 'completed' ? true : undefined), 10_000, 'the plan sync');
  const plan = await callApi<{ version: number; status: string }>(op, 'GET', `/v1/plans/${PLAN_ID}`);
  say(`plan ${PLAN_ID} synced (sync_plans operation ${shortId(sync.id)}): ${plan.status}, version ${plan.version}, 50000 USD, flight to ${flightEnd.slice(0, 10)}`);

  const buys: Buy[] = [
    { label: 'buy 1', seller: 0, product: 'sandbox_underpacing', budget: 5_000 },
    { label: 'buy 2', seller: 1, product: 'sandbox_instant', budget: 7_000, extra: { end_time: new Date(now + 500 * DAY).toISOString() } },
    { label: 'buy 3', seller: 0, product: 'sandbox_submitted', budget: 3_000 },
    { label: 'buy 4', seller: 1, product: 'sandbox_instant', budget: 2_000, packageExtra: { targeting_overlay: { geo_countries: ['FR'] } } },
  ];
  const labels = new Map<string, Buy>();
  const seen = new Map<string, string>();
  let campaignId = '';
  let done = false;

  const tell = (id: string, text: string) => {
    const buy = labels.get(id);
    if (buy) say(`${buy.label} (${stack.sellers[buy.seller]!.name}, ${buy.product}, ${buy.budget} USD)  ${text}`);
  };
  // Governance steps are not notifications: follow them on the campaign itself.
  const scanGovernance = async () => {
    const campaign = await callApi<{ buys: any[] }>(op, 'GET', `/v1/campaigns/${campaignId}`).catch(() => undefined);
    for (const b of campaign?.buys ?? []) {
      const gov = b.governance;
      const key = `${gov?.step}|${gov?.check?.decision}|${gov?.check?.check_id}|${gov?.outcome?.status}`;
      if (!gov || seen.get(b.id) === key) continue;
      seen.set(b.id, key);
      const line = governanceLine(gov);
      if (line) tell(b.id, line);
    }
  };
  const watchGovernance = async () => {
    while (!done) {
      await scanGovernance();
      await sleep(150);
    }
  };

  let watcher: Promise<void> | undefined;
  const finished = followEvents(op, {
    onOpen: async ({ reconnect }) => {
      if (reconnect) return;
      const campaign = await callApi<{ id: string; buys: Array<{ id: string }> }>(op, 'POST', '/v1/campaigns', {
        name: 'Demo launch',
        governance: { agent_id: stack.governanceId, plan_id: PLAN_ID },
        buys: buys.map((b) => ({ agent_id: stack.sellers[b.seller]!.id, request: buyRequest(b, now) })),
      });
      campaignId = campaign.id;
      campaign.buys.forEach((b, i) => labels.set(b.id, buys[i]!));
      say(`campaign ${campaign.id} started: ${buys.length} buys, each checked with the governance agent before anything is sent`);
      watcher = watchGovernance();
    },
    onNotification: async (n: Notification) => {
      if (n.type === 'campaign.completed' && (n.data as { campaign?: { id?: string } }).campaign?.id === campaignId) return 'stop';
      const operation = n.data.operation;
      if (!operation || !labels.has(operation.id)) return;
      tell(operation.id, notificationLine(n));
      const request = operation.input_request as { kind?: string; fields?: unknown[] } | null | undefined;
      if (n.type === 'operation.input_required' && request?.kind === 'governance_conditions') {
        const message = 'approved by the demo, standing in for the person who would decide (key demo-person, role approver)';
        tell(operation.id, `the demo answers as the person: approve the conditions ("${message}")`);
        await callApi(stack.person, 'POST', `/v1/operations/${operation.id}/input`, { decision: 'approve', message });
      }
    },
  });
  const timedOut = sleep(timeoutMs).then(() => 'timeout' as const);
  const result = await Promise.race([finished.then(() => 'done' as const), timedOut]);
  done = true;
  await watcher;
  // What happened between the last look and the end (the last outcome report).
  if (campaignId) await scanGovernance();
  if (result === 'timeout') {
    say(`the campaign did not finish within ${timeoutMs / 1000} s`);
    return false;
  }
  if (!(await summary(stack, op, campaignId, labels, say))) return false;
  const step: DemoStepInput = { stack, op, campaignId, labelOf: (operationId) => labels.get(operationId)?.label, deadline: started + timeoutMs, say };
  if (!(await runCreativesStep({ ...step, label: 'buy 1' }))) return false;
  return checkDelivery({ ...step, planId: PLAN_ID, expectedBuys: 3 });
}

async function summary(stack: DemoStack, op: ApiTarget, campaignId: string, labels: Map<string, Buy>, say: (t: string) => void): Promise<boolean> {
  const campaign = await callApi<any>(op, 'GET', `/v1/campaigns/${campaignId}`);
  say(`campaign ${campaign.id} ${campaign.status}: ${campaign.summary.done} done, ${campaign.summary.denied} denied, ${campaign.summary.failed} failed`);
  for (const b of campaign.buys) {
    const buy = labels.get(b.id)!;
    const committed = b.governance?.outcome?.committed_budget;
    const what =
      b.campaign_state === 'done'
        ? `done: media buy ${b.result?.media_buy_id ?? '?'}, committed ${committed ?? 0} USD${b.governance.rounds > 0 ? ` (after ${b.governance.rounds} round of conditions)` : ''}`
        : `${b.campaign_state}: ${b.error?.message ?? b.status}`;
    say(`  ${buy.label}  ${stack.sellers[buy.seller]!.name}  ${buy.product.padEnd(19)} ${String(buy.budget).padStart(5)} USD  ${what}`);
  }
  const ledger = stack.governance.stats().committedByPlan[PLAN_ID] ?? 0;
  say(`budget: planned ${campaign.budget.planned} USD, committed ${campaign.budget.committed} USD, plan remaining ${campaign.budget.remaining} USD`);
  const agrees = ledger === campaign.budget.committed;
  say(`the governance agent's own ledger for ${PLAN_ID}: ${ledger} USD committed${agrees ? ' (matches)' : ' — DOES NOT MATCH the campaign'}`);
  return campaign.status === 'done' && agrees && campaign.summary.done === 3 && campaign.summary.denied === 1;
}

function buyRequest(b: Buy, now: number): Record<string, unknown> {
  return {
    account: { account_id: 'gov_demo' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: new Date(now + 180 * DAY).toISOString(),
    packages: [{ product_id: b.product, pricing_option_id: 'cpm_usd_fixed', budget: b.budget, ...b.packageExtra }],
    ...b.extra,
  };
}

function notificationLine(n: Notification): string {
  const op = n.data.operation!;
  const event = n.data.event!;
  const change = event.from && event.to && event.from !== event.to ? `${event.from} -> ${event.to}` : op.status;
  const error = op.error as { code?: string; message?: string } | null;
  switch (n.type) {
    case 'operation.input_required':
      return `needs a person: ${String(n.data.message ?? op.input_message ?? '')}`;
    case 'operation.answered':
      return `answered by ${event.actor ?? '?'}`;
    case 'operation.rejected':
      return `rejected (${error?.code ?? '?'}): ${error?.message ?? ''}; nothing was sent to the seller`;
    case 'operation.completed':
      return `completed (${change}, by ${event.source}): media buy ${String(n.data.media_buy_id ?? '?')}`;
    default:
      return `${n.type.replace('operation.', '')} (${change}, by ${event.source})`;
  }
}

function governanceLine(gov: any): string | undefined {
  const check = gov.check;
  switch (gov.step) {
    case 'approved':
      return `governance: approved (${shortId(check?.check_id)}), token valid until ${check?.expires_at ?? '?'}: sending to the seller`;
    case 'reviewing':
      return `governance: under human review at the agent (task ${check?.task_id})`;
    case 'conditions':
      return `governance: approved on conditions: ${(check?.conditions ?? []).map((c: any) => `${c.field} = ${JSON.stringify(c.required_value)}`).join(', ')}`;
    case 'ended':
      return check?.decision === 'denied' ? `governance: denied (${(check.findings ?? []).map((f: any) => f.category_id).join(', ')})` : undefined;
    case 'reporting':
      return `seller result in: report_plan_outcome (${gov.outcome?.outcome}) owed to the governance agent`;
    case 'reported':
      return `outcome reported (${gov.outcome?.status}): committed ${gov.outcome?.committed_budget} USD; plan remaining ${gov.outcome?.plan_summary?.budget_remaining ?? '?'} USD`;
    default:
      return undefined;
  }
}

async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
