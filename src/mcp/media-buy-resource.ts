/** `adcp-orchestrator://media-buys/{id}`: a live media buy with its events, as get_media_buy answers it. */
import { EngineError } from '../engine/errors.js';
import { listMediaBuys, showMediaBuy } from '../engine/media-buys/buy-reads.js';
import type { ResourceKind } from './resources.js';

const PREFIX = 'adcp-orchestrator://media-buys/';
/** What resources/list shows: the newest buys. */
const LISTED = 50;

export const mediaBuyResource: ResourceKind = {
  prefix: PREFIX,
  template: {
    uriTemplate: `${PREFIX}{id}`,
    name: 'media-buy',
    title: 'A live media buy',
    description:
      'One live media buy (our id, buy_…) with its status, delivery, pacing, reports and events, as get_media_buy answers it. Subscribe to hear when it changes: a report arrives, its status or pacing moves, someone pauses or resumes it.',
    mimeType: 'application/json',
  },
  async read(scope, id) {
    try {
      return await showMediaBuy(scope.services, scope.auth.tenantId, id);
    } catch (err) {
      if (err instanceof EngineError && err.httpStatus === 404) return undefined;
      throw err;
    }
  },
  // A buy's changes name it by its id (src/notify/live-source.ts): its notifications and its wake-ups.
  changed: (change) => (change.many ? 'all' : change.operationIds),
  async list(scope) {
    const page = await listMediaBuys(scope.services, scope.auth.tenantId, { limit: LISTED });
    return page.media_buys.map((b) => ({
      uri: mediaBuyUri(b.id),
      name: `media buy ${b.id}`,
      description: `${b.status} at agent ${b.agent_id}, spent ${b.delivery.spend} ${b.delivery.currency ?? ''}`.trimEnd(),
      mimeType: 'application/json',
    }));
  },
};

export const mediaBuyUri = (id: string) => `${PREFIX}${encodeURIComponent(id)}`;
