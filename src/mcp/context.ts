/**
 * What the MCP layer is given to work with: the same engine services, store and live
 * feed the HTTP API uses (no second implementation of anything), and, per session,
 * the key that opened it. Tools receive both as a ToolContext.
 */
import type { Logger } from 'pino';
import type { RequestAuth } from '../api/auth.js';
import type { DatabaseOutage } from '../engine/database-outage.js';
import type { AnswerService } from '../engine/answer-service.js';
import type { CancelService } from '../engine/cancel-operation.js';
import type { CampaignService } from '../engine/governance/campaigns.js';
import type { PlanBook } from '../engine/governance/plan-book.js';
import type { MediaBuyService } from '../engine/media-buys/buy-service.js';
import type { Metrics } from '../engine/metrics.js';
import type { OperationService } from '../engine/operation-service.js';
import type { OperationStarter } from '../engine/operation-starter.js';
import type { LiveSource } from '../notify/live-source.js';
import type { Store } from '../store/index.js';
import type { DashboardLinks } from './links.js';
import type { OperationWatch } from './operation-watch.js';

export interface McpServices {
  store: Store;
  /** Keyed digest of a request (SecretBox.digest): idempotency keys compare requests by it. */
  digest(text: string): string;
  starter: OperationStarter;
  operations: OperationService;
  cancel: CancelService;
  /** Absent where nobody may answer (route-level set-ups): answer_operation then says so. */
  answers?: AnswerService;
  /** Absent where no governance flow runs: plan and campaign tools then say so. */
  governance?: { plans: PlanBook; campaigns: CampaignService };
  /** Live media buys: read them, pause and resume them at the seller, refresh them. */
  mediaBuys: MediaBuyService;
  live: LiveSource;
  watch: OperationWatch;
  metrics: Metrics;
  links: DashboardLinks;
  log: Logger;
  /** ADCP_ORCH_MCP_WAIT_MS: how long a start tool called without a task waits before answering. */
  waitMs: number;
  /** How often a client following a task is told to look again (MCP task `pollInterval`). */
  taskPollMs: number;
  /** Counts and logs (once per outage) a call that met the database away. */
  outage?: DatabaseOutage;
}

/** One tool call: who asked (the session's key), with what, and the call's abort signal. */
export interface ToolContext {
  auth: RequestAuth;
  services: McpServices;
  signal: AbortSignal;
}
