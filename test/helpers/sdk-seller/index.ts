/**
 * A second, independent seller for the integration tests: built directly on
 * @adcp/sdk's server builder with strict request and response validation, and
 * nothing of the project's sandbox (src/sandbox). Where the sandbox and the SDK
 * disagree about what a request may look like, a test run against this seller
 * fails, and its request log says which call and which field.
 *
 *   const seller = await startSdkSeller();
 *   await orch.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
 *   …
 *   expect(seller.log.invalid()).toEqual([]);
 *
 * What it sells and how it answers: catalog.ts. Reports are sent when a test
 * asks (`reporting.fire(mediaBuyId)`), so nothing moves by itself but a
 * submitted task's completion (`submittedDelayMs`, or `tasks.complete(id)`
 * with `submittedDelayMs: null`) and a creative's review (`creativeReviewMs`).
 */
import { createIdempotencyStore, InMemoryStateStore, memoryBackend } from '@adcp/sdk/server';
import { CreativeLibrary } from './creatives.js';
import { ReplyFaults, startHttpFront } from './http.js';
import { MediaBuyBook } from './media-buys.js';
import { PushNotifier } from './push.js';
import { Reporter } from './reporting.js';
import { RequestLog } from './request-log.js';
import { buildSellerServer } from './server.js';
import { newSigningIdentity } from './signing.js';
import { TaskBook } from './tasks.js';

export interface SdkSellerOptions {
  /** A submitted create completes this long after it was answered; null: only `tasks.complete(id)` completes it. Default 300. */
  submittedDelayMs?: number | null;
  /** A synced creative is reviewed this long after its sync. Default 200. */
  creativeReviewMs?: number;
  /** `next_expected_at` of a report: this long after it. Default one hour (nothing looks missing during a test). */
  reportIntervalMs?: number;
}

export interface SdkSeller {
  /** The MCP endpoint: the agent URL to register. */
  url: string;
  jwksUrl: string;
  log: RequestLog;
  book: MediaBuyBook;
  tasks: TaskBook;
  creatives: CreativeLibrary;
  reporting: Reporter;
  /** Task-status webhooks sent, with the receiver's answers. */
  pushes: PushNotifier;
  /** Replies to lose (`faults.dropReplies('create_media_buy')`): the call is done, its answer never arrives. */
  faults: ReplyFaults;
  close(): Promise<void>;
}

export async function startSdkSeller(options: SdkSellerOptions = {}): Promise<SdkSeller> {
  const now = Date.now;
  const identity = newSigningIdentity();
  const log = new RequestLog();
  const book = new MediaBuyBook(now);
  const pushes = new PushNotifier(identity.signerKey);
  const tasks = new TaskBook(pushes, options.submittedDelayMs === undefined ? 300 : options.submittedDelayMs, now);
  const creatives = new CreativeLibrary(options.creativeReviewMs ?? 200, now);
  const reporting = new Reporter(book, options.reportIntervalMs ?? 3_600_000);
  const idempotency = createIdempotencyStore({ backend: memoryBackend(), ttlSeconds: 86_400 });
  const stateStore = new InMemoryStateStore();
  // The agent URL is known once the port is: the catalog's format ids name it.
  const state = { agentUrl: '', book, tasks, creatives, idempotency, stateStore, now };
  const faults = new ReplyFaults();
  const front = await startHttpFront({ build: () => buildSellerServer(state), log, jwks: () => identity.jwks, faults });
  state.agentUrl = `${front.origin}/mcp`;
  return {
    url: state.agentUrl,
    jwksUrl: `${front.origin}/.well-known/jwks.json`,
    log,
    book,
    tasks,
    creatives,
    reporting,
    pushes,
    faults,
    async close() {
      tasks.close();
      creatives.close();
      pushes.close();
      await tasks.settled();
      await front.close();
    },
  };
}
