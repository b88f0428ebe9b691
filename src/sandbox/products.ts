/**
 * The sandbox catalogue. Each product id selects a scripted seller behaviour
 * for `create_media_buy` (decided by the FIRST package's product_id), so a
 * demo or a test picks an async path just by choosing a product. `get_products`
 * returns them all, which is how a user discovers the knobs.
 *
 * Each package then delivers by its own product's curve (delivery.ts):
 * linear unless the product says `under` or `over`. A product with
 * `awaitsCreatives` keeps its buy in `pending_creatives` until creatives are
 * assigned (the seam for creative review; today a test hook assigns them).
 */
import type { DeliveryCurve } from './delivery.js';
import { REPORTING_FREQUENCIES } from './flight.js';

export type SandboxBehaviour =
  | 'instant'
  | 'submitted'
  | 'working'
  | 'input_required'
  | 'input_required_untracked'
  | 'rejected'
  | 'failed'
  | 'auth_required'
  | 'flaky_429'
  | 'flaky_500'
  | 'lost_reply'
  | 'held_reply';

export interface SandboxProduct {
  product_id: string;
  behaviour: SandboxBehaviour;
  name: string;
  description: string;
  /** How a package of this product delivers. Default linear. */
  delivery?: DeliveryCurve;
  /** The buy stays pending_creatives until creatives are assigned. */
  awaitsCreatives?: boolean;
}

export const SANDBOX_PRODUCTS = [
  {
    product_id: 'sandbox_instant',
    behaviour: 'instant',
    name: 'Sandbox: instant',
    description: 'create_media_buy succeeds synchronously (media_buy_id + packages in the reply).',
  },
  {
    product_id: 'sandbox_submitted',
    behaviour: 'submitted',
    name: 'Sandbox: submitted',
    description:
      'Replies {status:"submitted", task_id}; the task completes after submittedDelayMs (webhook + tasks/get).',
  },
  {
    product_id: 'sandbox_working',
    behaviour: 'working',
    name: 'Sandbox: working',
    description: 'Replies {status:"working", task_id}; the task completes after workingDelayMs.',
  },
  {
    product_id: 'sandbox_input_required',
    behaviour: 'input_required',
    name: 'Sandbox: input required',
    description:
      'Replies {status:"input-required", task_id, message}; stays so until answered. Over A2A the A2A task stays ' +
      'open: a message on its taskId + contextId with the full valid input completes it (or, with ' +
      'ext.sandbox.then:"submitted", moves it to submitted). Out of band, over MCP or A2A: the custom tool ' +
      'sandbox_respond {task_id, approve, message?}: approve → completed, reject → rejected.',
  },
  {
    product_id: 'sandbox_input_required_untracked',
    behaviour: 'input_required_untracked',
    name: 'Sandbox: input required, no task',
    description:
      'Replies {status:"input-required", reason:"APPROVAL_REQUIRED", message} with no task_id (as some MCP ' +
      'sellers do): there is no task to poll or answer on, and a resend under the same key replays the same ' +
      'question. A buyer answers by sending a corrected request under a new key, or by giving up on it.',
  },
  {
    product_id: 'sandbox_rejected',
    behaviour: 'rejected',
    name: 'Sandbox: rejected',
    description: 'Replies {status:"rejected", message} at once (terminal).',
  },
  {
    product_id: 'sandbox_failed',
    behaviour: 'failed',
    name: 'Sandbox: failed',
    description: 'Replies with errors:[{code:"BUDGET_TOO_LOW", recovery:"correctable"}] (failed).',
  },
  {
    product_id: 'sandbox_auth_required',
    behaviour: 'auth_required',
    name: 'Sandbox: auth required',
    description:
      'Replies {status:"auth-required", task_id, message}; stays so until sandbox_respond approves (→ completed) or rejects.',
  },
  {
    product_id: 'sandbox_flaky_429',
    behaviour: 'flaky_429',
    name: 'Sandbox: flaky (429)',
    description:
      'The first flakyFailures calls per idempotency_key answer RATE_LIMITED (retry_after 1); then it succeeds synchronously.',
  },
  {
    product_id: 'sandbox_flaky_500',
    behaviour: 'flaky_500',
    name: 'Sandbox: flaky (HTTP 500)',
    description:
      'The first flakyFailures MCP calls per idempotency_key get HTTP 500 before anything executes; then it succeeds synchronously.',
  },
  {
    product_id: 'sandbox_lost_reply',
    behaviour: 'lost_reply',
    name: 'Sandbox: lost reply',
    description:
      'The first MCP call per idempotency_key creates the media buy but answers HTTP 500 (an ambiguous send); ' +
      'a retry with the same key and bytes replays the original result.',
  },
  {
    product_id: 'sandbox_held_reply',
    behaviour: 'held_reply',
    name: 'Sandbox: held reply',
    description:
      'The first MCP call per idempotency_key creates the media buy and holds its reply until the seller is told to ' +
      'release it (or the caller goes away): a send that is in flight for as long as a test needs; ' +
      'a retry with the same key and bytes replays the original result at once.',
  },
  {
    product_id: 'sandbox_underpacing',
    behaviour: 'instant',
    delivery: 'under',
    name: 'Sandbox: under-delivering',
    description: 'Succeeds synchronously; the package then delivers 40% of a linear plan (pacing index about 0.4).',
  },
  {
    product_id: 'sandbox_overpacing',
    behaviour: 'instant',
    delivery: 'over',
    name: 'Sandbox: over-delivering',
    description: 'Succeeds synchronously; the package then delivers 150% of a linear plan until its budget is exhausted.',
  },
  {
    product_id: 'sandbox_awaiting_creatives',
    behaviour: 'instant',
    awaitsCreatives: true,
    name: 'Sandbox: awaiting creatives',
    description: 'Succeeds synchronously; the buy stays pending_creatives until creatives are assigned to it.',
  },
] as const satisfies readonly SandboxProduct[];

export type SandboxProductId = (typeof SANDBOX_PRODUCTS)[number]['product_id'];

export const SANDBOX_PRODUCT_IDS: readonly SandboxProductId[] = SANDBOX_PRODUCTS.map((p) => p.product_id);

export function findSandboxProduct(productId: unknown): SandboxProduct | undefined {
  return (SANDBOX_PRODUCTS as readonly SandboxProduct[]).find((p) => p.product_id === productId);
}

/** The CPM every sandbox product is sold at (its pricing option's fixed_price). */
export const SANDBOX_CPM = 10;

/** The pricing option every sandbox product offers; buyers pass it back in packages. */
export const SANDBOX_PRICING_OPTION_ID = 'cpm_usd_fixed';

/** The creative formats every sandbox product takes; a creative in another fails its item of a sync. */
export const SANDBOX_FORMAT_IDS: readonly string[] = ['display_300x250'];

/** Minimum budget per package; below it any product answers BUDGET_TOO_LOW (like a real seller). */
export const SANDBOX_MIN_BUDGET = 1;

/** The AdCP 3.0 Product object for `get_products` (must pass the SDK's response validation). */
export function toAdcpProduct(p: SandboxProduct, agentUrl: string): Record<string, unknown> {
  return {
    product_id: p.product_id,
    name: p.name,
    description: p.description,
    publisher_properties: [{ publisher_domain: 'sandbox.example', selection_type: 'all' }],
    format_ids: SANDBOX_FORMAT_IDS.map((id) => ({ agent_url: agentUrl, id })),
    delivery_type: 'guaranteed',
    pricing_options: [
      { pricing_option_id: SANDBOX_PRICING_OPTION_ID, pricing_model: 'cpm', currency: 'USD', fixed_price: SANDBOX_CPM },
    ],
    reporting_capabilities: {
      available_reporting_frequencies: [...REPORTING_FREQUENCIES],
      expected_delay_minutes: 0,
      timezone: 'UTC',
      supports_webhooks: true,
      available_metrics: ['impressions', 'spend', 'clicks'],
      date_range_support: 'date_range',
    },
  };
}
