/** A valid 3.0 create_media_buy request for a sandbox product. */
export function mediaBuyRequest(productId: string, extra: Record<string, unknown> = {}) {
  return {
    account: { account_id: 'acc_test' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: '2027-12-31T23:59:59Z',
    packages: [{ product_id: productId, pricing_option_id: 'cpm_std', budget: 40000 }],
    ...extra,
  };
}

export const statusPath = (op: { events: Array<{ kind: string; to: string | null }> }) =>
  op.events.filter((e) => e.kind === 'transition' || e.kind === 'created').map((e) => e.to);
