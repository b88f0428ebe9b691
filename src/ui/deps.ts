/** What the dashboard's routes are built from. Features that land later are optional and add their pages. */
import type { CancelService } from '../engine/cancel-operation.js';
import type { Clock } from '../engine/clock.js';
import type { DatabaseOutage } from '../engine/database-outage.js';
import type { AnswerService } from '../engine/answer-service.js';
import type { MediaBuyService } from '../engine/media-buys/buy-service.js';
import type { Store } from '../store/index.js';
import type { LiveSource } from '../notify/live-source.js';

export interface UiDeps {
  store: Store;
  cancel: CancelService;
  live: LiveSource;
  clock: Clock;
  /** ADCP_ORCH_SESSION_TTL_MS */
  sessionTtlMs: number;
  /** ADCP_ORCH_PUBLIC_URL: an https:// address makes the cookies Secure. */
  publicUrl?: string;
  /** Wakes the subscription dispatcher (a redelivery is due now); its presence adds the subscriptions pages. */
  wakeSubscriptions?: () => void;
  /** Takes a person's answer (the engine's AnswerService, as POST /v1/operations/:id/input uses). */
  answers?: Pick<AnswerService, 'answer'>;
  /** Live media buys (the engine's MediaBuyService, as /v1/media-buys uses); its presence adds the media buys pages. */
  mediaBuys?: MediaBuyService;
  /** Told of every page the database's absence turned into a 503 (counted, logged once per outage). */
  outage?: DatabaseOutage;
}
