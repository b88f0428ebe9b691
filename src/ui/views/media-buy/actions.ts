/**
 * What an operator may do to a live buy: pause, resume, refresh now, cancel. Each is
 * a form (POST with the session's CSRF token) handled by the same engine services as
 * the API's routes, recorded with the key's name. A viewer sees none of them; an
 * ended buy offers none; a cancel already on its way is not offered twice.
 */
import { isTerminalBuyStatus } from '../../../domain/media-buy-status.js';
import type { OperationRow } from '../../../store/index.js';
import { html, type SafeHtml } from '../../html.js';
import type { MediaBuyView } from './view.js';

function isCancel(o: OperationRow): boolean {
  if (o.type !== 'update_media_buy' || o.status === 'failed' || o.status === 'rejected' || o.status === 'canceled') return false;
  try {
    return (JSON.parse(o.request_body) as { canceled?: unknown }).canceled === true;
  } catch {
    return false;
  }
}

function button(v: MediaBuyView, action: 'pause' | 'resume' | 'refresh', label: string, explain: string): SafeHtml {
  return html`<form method="post" action="/media-buys/${v.buy.id}/${action}" class="inline action-form">
  <input type="hidden" name="_csrf" value="${v.csrf}">
  <button type="submit" class="${action === 'refresh' ? '' : 'primary'}" data-action="${action}" title="${explain}">${label}</button>
</form>`;
}

export function buyActions(v: MediaBuyView): SafeHtml {
  const b = v.buy;
  if (!v.canAct || isTerminalBuyStatus(b.status)) return html``;
  const canceling = v.requests.some(isCancel);
  const pauseOrResume =
    b.status === 'paused'
      ? button(v, 'resume', 'Resume', 'Sends update_media_buy with paused: false to the seller')
      : button(v, 'pause', 'Pause', 'Sends update_media_buy with paused: true to the seller; a paused period delivers nothing');
  const cancel = canceling
    ? html`<p class="muted small" data-cancel-pending>A cancellation is on its way to the seller (see Operations on this buy).</p>`
    : html`<details class="panel danger cancel-panel" id="buy-cancel" hx-preserve="true">
  <summary>Cancel this media buy at the seller…</summary>
  <form method="post" action="/media-buys/${b.id}/cancel" class="stack">
    <input type="hidden" name="_csrf" value="${v.csrf}">
    <p>Sends <code>update_media_buy</code> with <code>canceled: true</code>, as an operation of its own. A canceled buy cannot be resumed.</p>
    <label for="buy-cancel-reason">Reason <span class="muted">(optional, recorded with your name)</span></label>
    <input id="buy-cancel-reason" name="reason" maxlength="1000">
    <button type="submit" class="danger" data-action="cancel">Yes, cancel the buy</button>
  </form>
</details>`;
  return html`<div class="buy-actions">
  <div class="button-row">${pauseOrResume}${button(v, 'refresh', 'Refresh now', 'Reads the status and delivery from the seller now (get_media_buys, get_media_buy_delivery)')}</div>
  ${cancel}
</div>`;
}
