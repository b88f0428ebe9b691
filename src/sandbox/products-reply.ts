/**
 * `get_products` of a 3.1 seller, answered as a custom tool: the SDK (3.0 only)
 * would shape and check it as 3.0. The catalogue is the same (products.ts); a
 * call served in 3.1 also gets what 3.1 adds: `cache_scope` (required on every 3.1
 * reply; `public`, as the sandbox has one rate card for every account) and, on
 * each product's reporting capabilities, the granularities of windowed delivery
 * pulls it honours (delivery-windows.ts).
 */
import { WINDOWED_PULL_GRANULARITIES } from './delivery-windows.js';
import { SANDBOX_PRODUCTS, toAdcpProduct } from './products.js';
import { assertValidAdcpReply } from './sdk-validator.js';
import type { SellerVersion } from './versions.js';
import { isPlainObject, ok, type ToolResult } from './wire.js';

export function getProductsReply(args: Record<string, unknown>, agentUrl: string, version: SellerVersion): ToolResult {
  const echo = args.context !== undefined ? { context: args.context } : {};
  const products = SANDBOX_PRODUCTS.map((p) => toAdcpProduct(p, agentUrl));
  if (version === '3.0') {
    const body = { products, ...echo };
    assertValidAdcpReply('sandbox seller', 'get_products', body);
    return ok(body);
  }
  return ok({
    products: products.map((p) => ({
      ...p,
      ...(isPlainObject(p.reporting_capabilities) && {
        reporting_capabilities: { ...p.reporting_capabilities, windowed_pull_granularities: [...WINDOWED_PULL_GRANULARITIES] },
      }),
    })),
    cache_scope: 'public',
    ...echo,
  });
}
