/**
 * What we know of a seller's products: what its `get_products` answers said,
 * read from the tenant's completed `get_products` operations for that agent,
 * newest first, on their own index (migration 018). Used to keep a reporting
 * frequency "within the product's available_reporting_frequencies when known".
 */
import type { Db } from './db.js';
import type { Tx } from './tx.js';

/** How many recent answers are searched: a product listed long ago and not since is not "known" any more. */
const RECENT_ANSWERS = 20;

export class ProductReads {
  constructor(private readonly db: Db) {}

  /** The latest `reporting_capabilities` we saw for each of `productIds` (absent: not known). */
  async reportingCapabilities(tenantId: string, agentId: string, productIds: readonly string[], conn: Tx = this.db.kysely): Promise<Map<string, Record<string, unknown>>> {
    const found = new Map<string, Record<string, unknown>>();
    if (productIds.length === 0) return found;
    const rows = await conn
      .selectFrom('operations')
      .select('result')
      .where('tenant_id', '=', tenantId)
      .where('agent_id', '=', agentId)
      .where('type', '=', 'get_products')
      .where('completed_at', 'is not', null)
      .where('status', '=', 'completed')
      .orderBy('completed_at', 'desc')
      .limit(RECENT_ANSWERS)
      .execute();
    for (const r of rows) {
      let products: unknown;
      try {
        products = r.result ? (JSON.parse(r.result) as { products?: unknown }).products : undefined;
      } catch {
        continue;
      }
      if (!Array.isArray(products)) continue;
      for (const p of products) {
        if (!p || typeof p !== 'object') continue;
        const { product_id: id, reporting_capabilities: caps } = p as Record<string, unknown>;
        if (typeof id === 'string' && productIds.includes(id) && !found.has(id) && caps && typeof caps === 'object') found.set(id, caps as Record<string, unknown>);
      }
      if (found.size === productIds.length) break;
    }
    return found;
  }
}
