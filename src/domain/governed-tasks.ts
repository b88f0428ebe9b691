/**
 * The spend-commit tasks a governed request may be (AdCP spec, governance:
 * "Spend-commit tasks"), and what each commits, as the intent check and the
 * outcome report describe it. Pure.
 *
 * - create_media_buy / update_media_buy: the packages' budgets (media_buy);
 * - activate_signal: the activation fee of the signal's pricing option
 *   (`signal_activation`). Neither the request (`pricing_option_id`) nor the
 *   reply (`deployments`) states an amount, so the report states none unless
 *   the agent's reply does: the governance agent priced the option at its check;
 * - acquire_rights: the agreed `terms.amount` of an `acquired` reply
 *   (`rights_license`); a `rejected` reply is the seller refusing, reported
 *   `failed` with its reason.
 *
 * `build_creative` and `update_rights` are spend-commit tasks too; they are not
 * governed here yet and are refused as such (README, Governance).
 */

export const GOVERNED_TASKS: ReadonlySet<string> = new Set(['create_media_buy', 'update_media_buy', 'activate_signal', 'acquire_rights']);

/** `purchase_type` of the check and the outcome report; none for media buys (the field's default). */
export function purchaseTypeOf(tool: string): 'signal_activation' | 'rights_license' | undefined {
  if (tool === 'activate_signal') return 'signal_activation';
  if (tool === 'acquire_rights') return 'rights_license';
  return undefined;
}

/** The report's `seller_response` for a completed task: the seller's reference for what it made, and the amount committed when known. */
export function sellerResponseOf(tool: string, request: Record<string, unknown>, result: Record<string, unknown> | undefined): { seller_reference?: string; committed_budget?: number } {
  const reference = referenceOf(tool, request, result);
  const committed = committedOf(tool, request, result);
  return {
    ...(typeof reference === 'string' && reference !== '' ? { seller_reference: reference.slice(0, 255) } : {}),
    ...(committed !== undefined ? { committed_budget: committed } : {}),
  };
}

function referenceOf(tool: string, request: Record<string, unknown>, result: Record<string, unknown> | undefined): unknown {
  switch (tool) {
    case 'acquire_rights':
      return result?.rights_id ?? request.rights_id;
    case 'activate_signal':
      // The activation handle: the deployments carry no id of their own.
      return request.signal_agent_segment_id;
    default:
      return result?.media_buy_id ?? request.media_buy_id;
  }
}

function committedOf(tool: string, request: Record<string, unknown>, result: Record<string, unknown> | undefined): number | undefined {
  switch (tool) {
    case 'acquire_rights': {
      const terms = result?.terms;
      const own = amount(result?.committed_budget);
      if (own !== undefined) return own;
      return terms && typeof terms === 'object' ? amount((terms as { amount?: unknown }).amount) : undefined;
    }
    case 'activate_signal':
      return amount(result?.committed_budget);
    default:
      return committedBudgetOf(request, result);
  }
}

/** A completed task whose reply is the seller refusing (acquire_rights `rejected`): reported as `failed`. */
export function refusalInResult(tool: string, result: Record<string, unknown> | undefined): { code: string; message?: string } | undefined {
  if (tool !== 'acquire_rights' || result?.status !== 'rejected') return undefined;
  return { code: 'RIGHTS_REJECTED', ...(typeof result.reason === 'string' ? { message: result.reason.slice(0, 1000) } : {}) };
}

/**
 * What a media buy committed, as report_plan_outcome wants it: the seller's own
 * `committed_budget` (or `total_budget`), else the sum of the confirmed
 * packages' budgets, else what the request asked for.
 */
export function committedBudgetOf(request: Record<string, unknown>, result: Record<string, unknown> | undefined): number {
  const own = amount(result?.committed_budget) ?? amount(result?.total_budget);
  if (own !== undefined) return own;
  const fromResult = sumBudgets([result?.packages]);
  if (fromResult !== undefined) return fromResult;
  return sumBudgets([request.packages, request.new_packages]) ?? amount(request.total_budget) ?? 0;
}

function amount(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (v && typeof v === 'object' && typeof (v as { amount?: unknown }).amount === 'number') return (v as { amount: number }).amount;
  return undefined;
}

function sumBudgets(lists: unknown[]): number | undefined {
  let total: number | undefined;
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      const b = p && typeof p === 'object' ? amount((p as { budget?: unknown }).budget) : undefined;
      if (b !== undefined) total = (total ?? 0) + b;
    }
  }
  return total;
}
