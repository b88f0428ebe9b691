/** Builds the Fastify app: error shape, OpenAPI, and every route. */
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Metrics } from '../engine/metrics.js';
import type { DatabaseOutage } from '../engine/database-outage.js';
import type { OperationService } from '../engine/operation-service.js';
import type { Store } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import { hasRoleCheck } from './auth.js';
import { installErrorHandling } from './errors.js';
import { agentRoutes } from './routes/agents.js';
import { healthRoutes } from './routes/health.js';
import { debugGcRoutes } from './routes/debug-gc.js';
import { operationRoutes } from './routes/operations.js';
import { cancelRoutes } from './routes/cancel.js';
import type { CancelService } from '../engine/cancel-operation.js';
import { reconcileRoutes } from './routes/reconcile.js';
import { inputRoutes } from './routes/input.js';
import { settingsRoutes } from './routes/settings.js';
import type { AnswerService } from '../engine/answer-service.js';
import type { SpendApproval } from '../engine/spend-approval.js';
import type { Reconciler } from '../engine/reconciler.js';
import type { InstanceView } from '../store/instances-repo.js';
import type { GovernanceGuard } from '../engine/governance/governed-ops.js';
import type { PlanBook } from '../engine/governance/plan-book.js';
import type { CampaignService } from '../engine/governance/campaigns.js';
import { OperationStarter } from '../engine/operation-starter.js';
import type { AgentCapabilitiesService } from '../engine/agent-capabilities.js';
import { planRoutes } from './routes/plans.js';
import { campaignRoutes } from './routes/campaigns.js';
import { mediaBuyRoutes } from './routes/media-buys.js';
import type { MediaBuyService } from '../engine/media-buys/buy-service.js';
import type { CreativeService } from '../engine/media-buys/creative-service.js';

export interface ApiDeps {
  store: Store;
  secrets: SecretBox;
  operations: OperationService;
  metrics: Metrics;
  logger: Logger;
  isReady: () => boolean;
  /** Live instances on this database, shown by /readyz (absent in route-level tests). */
  instances?: () => Promise<InstanceView[]>;
  /** Absent in route-level tests that build the API alone. */
  reconciler?: Reconciler;
  /** People in the loop: answers and the spend approval rule (absent: no /input route). */
  answers?: AnswerService;
  spendApproval?: SpendApproval;
  /** Absent in route-level tests that build the API alone. */
  cancel?: CancelService;
  /** Asks agents for their capabilities (absent: registration does not ask). */
  capabilities?: AgentCapabilitiesService;
  /** Governance before every spend (absent in route-level tests: governed requests are then refused with 501). */
  governance?: { guard: GovernanceGuard; plans: PlanBook; campaigns: CampaignService };
  /** Starts operations (built from operations, spendApproval and governance when absent). */
  starter?: OperationStarter;
  /** Live media buys (absent in route-level tests that build the API alone). */
  mediaBuys?: MediaBuyService;
  /** Creatives sent to live buys (POST /v1/media-buys/:id/creatives). */
  creatives?: CreativeService;
  /** Serve POST /debug/gc (ADCP_ORCH_DEBUG_GC, benchmarks only). */
  debugGc?: boolean;
  /** Told of every 503 the database's absence causes (counted, logged once per outage). */
  outage?: DatabaseOutage;
  /** Extra route groups (webhooks, events, UI) registered by their own modules. */
  plugins?: Array<(app: FastifyInstance) => void | Promise<void>>;
}

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    // Request lines are noise at our rates; errors are logged where they are handled.
    logController: new LogController({ disableRequestLogging: true }),
    // The webhook receiver enforces its own 1 MB limit with the spec's 413.
    bodyLimit: 1024 * 1024,
  });
  app.decorate('requestDigest', (text: string) => deps.secrets.digest(text));
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandling(app, deps.outage);
  await app.register(swagger, {
    openapi: {
      info: { title: 'adcp-orchestrator', version: '0.1.0', description: 'Durable AdCP operations for buyers' },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ apiKey: [] }],
    },
    transform: jsonSchemaTransform,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // Every /v1 route states the role it needs: one registered without would let any key,
  // however small its role, do what it does. Refuse to start rather than serve it.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/v1/') && !hasRoleCheck(route.preHandler)) {
      throw new Error(`route ${String(route.method)} ${route.url} has no requireRole preHandler`);
    }
  });

  agentRoutes(app, deps);
  const starter = deps.starter ?? new OperationStarter(deps.operations, deps.spendApproval, deps.governance?.guard);
  operationRoutes(app, { store: deps.store, starter });
  if (deps.governance) {
    planRoutes(app, { store: deps.store, operations: deps.operations, plans: deps.governance.plans });
    campaignRoutes(app, { store: deps.store, campaigns: deps.governance.campaigns });
  }
  if (deps.answers) inputRoutes(app, { store: deps.store, answers: deps.answers });
  settingsRoutes(app, deps);
  if (deps.cancel) cancelRoutes(app, { store: deps.store, cancel: deps.cancel });
  if (deps.mediaBuys) mediaBuyRoutes(app, { store: deps.store, mediaBuys: deps.mediaBuys, ...(deps.creatives ? { creatives: deps.creatives } : {}) });
  if (deps.reconciler) reconcileRoutes(app, { store: deps.store, reconciler: deps.reconciler });
  healthRoutes(app, deps);
  if (deps.debugGc) debugGcRoutes(app, deps);
  for (const plugin of deps.plugins ?? []) await plugin(app);
  return app;
}
