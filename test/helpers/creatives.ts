/**
 * Creatives for the sandbox seller's review desk (src/sandbox/creative-library.ts):
 * a spec-valid display creative whose name decides its review ("reject" → rejected,
 * "hold" → never reviewed, anything else → approved), and reads of a buy's creatives.
 */
import { buyWhen } from './live-buys.js';
import type { TestOrchestrator } from './orchestrator.js';

/** A 300×250 image creative as AdCP's sync_creatives takes it. */
export function displayCreative(creativeId: string, name: string, sellerUrl: string): Record<string, unknown> {
  return {
    creative_id: creativeId,
    name,
    format_id: { agent_url: sellerUrl, id: 'display_300x250' },
    assets: { image: { asset_type: 'image', url: `https://cdn.brand.example/${creativeId}.png`, width: 300, height: 250 } },
  };
}

/** The buy's creative `creativeId` once `check` holds for it. */
export async function creativeWhen(orch: TestOrchestrator, buyId: string, creativeId: string, check: (c: any) => boolean, timeoutMs = 20_000): Promise<any> {
  const buy = await buyWhen(orch, buyId, (b) => (b.creatives ?? []).some((c: any) => c.creative_id === creativeId && check(c)), timeoutMs);
  return buy.creatives.find((c: any) => c.creative_id === creativeId);
}

/** The operation once `check` holds for it. */
export async function operationWhen(orch: TestOrchestrator, id: string, check: (op: any) => boolean, timeoutMs = 20_000): Promise<any> {
  const { eventually } = await import('./orchestrator.js');
  return eventually(async () => {
    const op = (await orch.api('GET', `/v1/operations/${id}`)).body;
    return check(op) ? op : undefined;
  }, timeoutMs);
}
