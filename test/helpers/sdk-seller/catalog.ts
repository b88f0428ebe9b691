/**
 * What the seller sells. Two products, named for how `create_media_buy` of
 * them answers (the first package's product decides):
 *   sdk_sync       the buy is made at once: `active`, in the reply itself;
 *   sdk_submitted  the reply is `submitted` with a task_id; the buy is made
 *                  later, and the task completes (tasks/get, and the
 *                  push_notification_config webhook when one was given).
 * Both are CPM at a fixed 10 USD, reported hourly or daily by webhook.
 */
import type { Product } from '@adcp/sdk';

export const SYNC_PRODUCT = 'sdk_sync';
export const SUBMITTED_PRODUCT = 'sdk_submitted';
export const PRICING_OPTION = 'cpm_usd_fixed';
export const CURRENCY = 'USD';
export const CPM = 10;

const PRODUCT_IDS = [SYNC_PRODUCT, SUBMITTED_PRODUCT] as const;

export function isKnownProduct(id: unknown): boolean {
  return typeof id === 'string' && (PRODUCT_IDS as readonly string[]).includes(id);
}

/** The catalog as get_products answers it; `agentUrl` is where our creative formats are declared. */
export function products(agentUrl: string): Product[] {
  return PRODUCT_IDS.map((id) => ({
    product_id: id,
    name: id === SYNC_PRODUCT ? 'Run of site display, booked at once' : 'Run of site display, booked after review',
    description:
      id === SYNC_PRODUCT
        ? 'create_media_buy completes in its reply; the buy is active at once.'
        : 'create_media_buy answers submitted; the buy is booked a moment later (tasks/get, or the push notification webhook).',
    publisher_properties: [{ publisher_domain: 'sdk-seller.example', selection_type: 'all' }],
    format_ids: [{ agent_url: agentUrl, id: 'display_300x250' }],
    delivery_type: 'non_guaranteed',
    pricing_options: [{ pricing_option_id: PRICING_OPTION, pricing_model: 'cpm', currency: CURRENCY, fixed_price: CPM }],
    reporting_capabilities: {
      available_reporting_frequencies: ['hourly', 'daily'],
      expected_delay_minutes: 0,
      timezone: 'UTC',
      supports_webhooks: true,
      available_metrics: ['impressions', 'spend', 'clicks'],
      date_range_support: 'lifetime_only',
    },
  })) as Product[];
}
