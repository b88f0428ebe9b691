/**
 * The demo's creatives act: two banners go to one of the campaign's buys
 * (POST /v1/media-buys/:id/creatives, a durable `sync_creatives`); the sandbox
 * seller reviews them a moment later, approving one and rejecting the other
 * (its name says so) with a reason; the rejection waits in the inbox as a
 * `creative_rejected` item on the sync operation; the demo answers it as the
 * person would, with a corrected creative (a `respond` with `params`, sent as
 * a child `sync_creatives`), and the seller approves the correction.
 *
 * Every line is read back through the API (the buy's `creatives`, the
 * operation's `input_request`), never taken from what was sent: the demo shows
 * what a user would see. Bounded by the demo's deadline.
 */
import { callApi } from '../api-client.js';
import type { MediaBuyJson } from '../../domain/media-buy-json.js';
import { campaignBuys, shortId, sleep, type DemoStepInput } from './demo-step.js';

export interface CreativesStepInput extends DemoStepInput {
  /** Which buy gets the creatives: the demo's label of it ("buy 1"). */
  label: string;
}

interface CreativeView {
  creative_id: string;
  name: string;
  status: string;
  rejection_reason?: string;
  inbox: string | null;
  sync: { operation_id: string };
}

const GOOD = 'cr_demo_hero';
const BAD = 'cr_demo_promo';

export async function runCreativesStep(c: CreativesStepInput): Promise<boolean> {
  const buy = await findBuy(c);
  if (!buy) {
    c.say(`creatives: ${c.label} has no media buy record to send creatives to`);
    return false;
  }
  const seller = c.stack.sellers.find((s) => s.id === buy.agent_id)!;
  const packageId = buy.packages[0]!.package_id;
  const who = `${c.label} (${seller.name})`;
  const sent = await callApi<{ id: string; status: string }>(c.op, 'POST', `/v1/media-buys/${encodeURIComponent(buy.id)}/creatives`, {
    creatives: [banner(GOOD, 'Launch hero banner', seller.agent.url), banner(BAD, 'Launch promo banner (reject: landing page on another domain)', seller.agent.url)],
    assignments: [
      { creative_id: GOOD, package_id: packageId },
      { creative_id: BAD, package_id: packageId },
    ],
  });
  c.say(`${who}  two banners sent to package ${packageId} (sync_creatives operation ${shortId(sent.id)}: ${sent.status}); the seller reviews them before they run`);

  const told = new Map<string, string>();
  let corrected = false;
  for (;;) {
    const creatives = (await callApi<{ creatives: CreativeView[] }>(c.op, 'GET', `/v1/media-buys/${encodeURIComponent(buy.id)}`)).creatives;
    for (const cr of creatives) {
      const key = `${cr.status}|${cr.name}`;
      if (told.get(cr.creative_id) === key) continue;
      told.set(cr.creative_id, key);
      c.say(`${who}  creative ${cr.creative_id} "${cr.name}": ${cr.status}${cr.rejection_reason ? ` — "${cr.rejection_reason}"` : ''}`);
    }
    const bad = creatives.find((cr) => cr.creative_id === BAD);
    if (!corrected && bad?.status === 'rejected' && bad.inbox === 'asked') {
      if (!(await correct(c, who, bad, seller.agent.url))) return false;
      corrected = true;
    }
    if (corrected && creatives.length === 2 && creatives.every((cr) => cr.status === 'approved')) {
      c.say(`${who}  both creatives approved: the rejection was answered by a person and the correction accepted by the seller`);
      return true;
    }
    if (Date.now() > c.deadline) {
      c.say(`creatives of ${c.label} were not all approved in time (${creatives.map((cr) => `${cr.creative_id} ${cr.status}`).join(', ')})`);
      return false;
    }
    await sleep(150);
  }
}

/** The inbox item on the sync operation, answered as the person with a corrected creative. */
async function correct(c: CreativesStepInput, who: string, bad: CreativeView, sellerUrl: string): Promise<boolean> {
  const waiting = await callApi<{ id: string; needs_input: boolean; input_request?: { id: string; kind: string; allowed: string[] } }>(c.op, 'GET', `/v1/operations/${encodeURIComponent(bad.sync.operation_id)}`);
  const request = waiting.input_request;
  if (!waiting.needs_input || request?.kind !== 'creative_rejected') {
    c.say(`${who}  the rejection of ${bad.creative_id} is not in the inbox (operation ${shortId(waiting.id)})`);
    return false;
  }
  c.say(`${who}  in the inbox: creative_rejected on operation ${shortId(waiting.id)}, a person may ${request.allowed.join(' or ')}`);
  const message = 'landing page moved to the brand domain';
  const child = await callApi<{ id: string; type: string }>(c.stack.person, 'POST', `/v1/operations/${encodeURIComponent(waiting.id)}/input`, {
    decision: 'respond',
    question_id: request.id,
    message,
    params: { creatives: [banner(BAD, 'Launch promo banner, landing page fixed', sellerUrl)] },
  });
  c.say(`${who}  the demo answers as the person (key ${c.stack.personName}, role approver): respond with a corrected ${bad.creative_id} ("${message}") → ${child.type} operation ${shortId(child.id)}`);
  return true;
}

async function findBuy(c: CreativesStepInput): Promise<MediaBuyJson | undefined> {
  return (await campaignBuys(c)).find((b) => c.labelOf(b.operation_id) === c.label);
}

/** A 300×250 display creative as sync_creatives takes it; the sandbox seller's review reads its name. */
function banner(creativeId: string, name: string, sellerUrl: string): Record<string, unknown> {
  return {
    creative_id: creativeId,
    name,
    format_id: { agent_url: sellerUrl, id: 'display_300x250' },
    assets: { image: { asset_type: 'image', url: `https://cdn.example-brand.com/${creativeId}.png`, width: 300, height: 250 } },
  };
}
