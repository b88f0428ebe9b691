/**
 * A rejected creative in the inbox and on its operation's page (README, Creatives):
 * which creatives the seller rejected and why, the buy they were for, and the
 * corrected creatives a person sends, prefilled with what was sent so that only
 * the fault needs fixing. The forms themselves are answer-forms.ts's.
 */
import type { InputRequest } from '../../domain/input-request.js';
import type { OperationRow } from '../../store/index.js';
import { html, type SafeHtml } from '../html.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The rejected creatives and their reasons, with the buy's page. */
export function rejectedCreatives(request: Pick<InputRequest, 'creatives' | 'media_buy'>): SafeHtml {
  const list = request.creatives ?? [];
  if (list.length === 0) return html``;
  return html`<ul class="rejected-creatives">${list.map(
    (c) => html`<li data-creative-id="${c.creative_id}"><strong>${c.name ?? c.creative_id}</strong> <code>${c.creative_id}</code>: <span class="reason">${c.rejection_reason}</span>${c.package_ids.length ? html` <span class="muted small">(packages ${c.package_ids.join(', ')})</span>` : ''}</li>`,
  )}</ul>
${request.media_buy ? html`<p class="meta"><span>Media buy <a href="/media-buys/${request.media_buy.id}"><code>${request.media_buy.media_buy_id}</code></a></span></p>` : ''}`;
}

/**
 * The correction's starting point: `{"creatives": [...]}` with each rejected creative as
 * this operation sent it (its request holds no credentials to hide), indented for editing.
 */
export function correctionTemplate(o: OperationRow, request: Pick<InputRequest, 'creatives'>): string {
  const ids = new Set((request.creatives ?? []).map((c) => c.creative_id));
  let sent: unknown[] = [];
  try {
    const body = JSON.parse(o.request_body) as Json;
    sent = Array.isArray(body.creatives) ? body.creatives.filter((c) => isObject(c) && ids.has(String(c.creative_id))) : [];
  } catch {
    /* an unreadable request leaves the person to write the creatives */
  }
  return JSON.stringify({ creatives: sent }, null, 2);
}
