/**
 * `format: "slack"`: the notification as a message a person reads in a Slack
 * channel (an incoming webhook takes `{text, blocks}`): what happened, to which
 * operation, its status now, and a link to the operation's page. `text` alone
 * says it all (it is what notifications and screen readers show); the blocks lay
 * the same out.
 */

interface NotificationBody {
  id?: string;
  type?: string;
  created_at?: string | number;
  data?: {
    operation?: { id?: string; type?: string; status?: string; agent_id?: string; result?: { media_buy_id?: unknown } | null };
    event?: unknown;
    message?: unknown;
    reason?: unknown;
    reminder?: unknown;
    link?: unknown;
    campaign?: { id?: string; name?: string; status?: string };
    media_buy?: { id?: string; media_buy_id?: string; status?: string; delivery?: { spend?: unknown; currency?: unknown; pacing?: { state?: unknown } } };
  };
}

const HEADLINES: Record<string, string> = {
  'operation.created': 'Operation created',
  'operation.submitted': 'Operation submitted to the seller',
  'operation.input_required': 'Input required',
  'operation.answered': 'Input answered',
  'operation.completed': 'Operation completed',
  'operation.failed': 'Operation failed',
  'operation.rejected': 'Operation rejected',
  'operation.canceled': 'Operation canceled',
  'operation.stalled': 'Operation stalled',
  'operation.conflict': 'Conflicting report',
  'campaign.completed': 'Campaign completed',
  'media_buy.created': 'Media buy live',
  'media_buy.activated': 'Media buy active',
  'media_buy.paused': 'Media buy paused',
  'media_buy.resumed': 'Media buy resumed',
  'media_buy.completed': 'Media buy completed',
  'media_buy.canceled': 'Media buy canceled',
  'media_buy.rejected': 'Media buy rejected',
  'media_buy.creatives_needed': 'Media buy needs creatives',
  'media_buy.underpacing': 'Media buy under-pacing',
  'media_buy.overpacing': 'Media buy over-pacing',
  'media_buy.report_missing': 'Delivery report missing',
  'media_buy.governance_findings': 'Governance findings on delivery',
  'media_buy.unreadable': 'Seller no longer answers for the media buy',
  'media_buy.readable': 'Seller answers for the media buy again',
  'creative.approved': 'Creative approved',
  'creative.rejected': 'Creative rejected',
  'creative.stalled': 'Creative review stalled',
};

/** Slack mrkdwn treats &, < and > as control characters; everything else is literal. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** The creative a creative.* notification's event names, with its rejection reason. */
function creativeOf(event: unknown): { id: string; name?: string; reason?: string } | undefined {
  const detail = event && typeof event === 'object' ? (event as { detail?: unknown }).detail : undefined;
  if (!detail || typeof detail !== 'object') return undefined;
  const d = detail as Record<string, unknown>;
  const id = str(d.creative_id);
  if (!id) return undefined;
  return { id, ...(str(d.name) ? { name: str(d.name) } : {}), ...(str(d.rejection_reason) ? { reason: str(d.rejection_reason) } : {}) };
}

export function operationLink(publicUrl: string | undefined, operationId: string | undefined): string | undefined {
  if (!publicUrl || !operationId) return undefined;
  return `${publicUrl}/operations/${encodeURIComponent(operationId)}`;
}

export interface SlackMessage {
  text: string;
  blocks: Array<Record<string, unknown>>;
}

export function slackMessage(body: NotificationBody, publicUrl: string | undefined): SlackMessage {
  const type = str(body.type) ?? 'notification';
  const op = body.data?.operation;
  const headline = HEADLINES[type] ?? type;
  const facts: string[] = [];
  if (op) {
    facts.push(`*${slackEscape(str(op.type) ?? 'operation')}* \`${slackEscape(str(op.id) ?? '?')}\``);
    if (str(op.status)) facts.push(`status *${slackEscape(op.status!)}*`);
    const buy = op.result && typeof op.result === 'object' ? str(op.result.media_buy_id) : undefined;
    if (buy) facts.push(`media buy \`${slackEscape(buy)}\``);
  } else if (body.data?.media_buy) {
    const b = body.data.media_buy;
    facts.push(`media buy \`${slackEscape(str(b.media_buy_id) ?? str(b.id) ?? '?')}\``);
    if (str(b.status)) facts.push(`status *${slackEscape(b.status!)}*`);
    if (typeof b.delivery?.spend === 'number') facts.push(`spent ${b.delivery.spend}${str(b.delivery.currency) ? ` ${slackEscape(String(b.delivery.currency))}` : ''}`);
    // A creative's review (creative.*): which creative, before the buy's facts.
    const creative = creativeOf(body.data.event);
    if (creative) facts.unshift(`creative \`${slackEscape(creative.id)}\`${creative.name ? ` (${slackEscape(creative.name)})` : ''}`);
  } else if (body.data?.campaign) {
    const c = body.data.campaign;
    facts.push(`campaign *${slackEscape(str(c.name) ?? str(c.id) ?? '?')}*`);
    if (str(c.status)) facts.push(`status *${slackEscape(c.status!)}*`);
  }
  const message = str(body.data?.message);
  const reason = str(body.data?.reason) ?? creativeOf(body.data?.event)?.reason;
  // The body's own link when the outbox wrote one; else built here from the public URL.
  const link = str(body.data?.link) ?? operationLink(publicUrl, str(op?.id));
  const reminder = body.data?.reminder === true ? ' (reminder)' : '';

  const summary = `${slackEscape(headline)}${reminder}: ${facts.join(', ')}`;
  const detail = [message && `> ${slackEscape(message)}`, reason && `reason: ${slackEscape(reason)}`].filter(Boolean).join('\n');
  const open = !op && body.data?.media_buy ? 'Open the media buy' : 'Open the operation';
  const text = [summary, detail, link && `<${link}|${open}>`].filter(Boolean).join('\n');

  const blocks: Array<Record<string, unknown>> = [{ type: 'section', text: { type: 'mrkdwn', text: [summary, detail].filter(Boolean).join('\n') } }];
  if (link) {
    blocks.push({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: open }, url: link }] });
  }
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `\`${slackEscape(type)}\` · ${slackEscape(str(body.id) ?? '')}` }] });
  return { text, blocks };
}
