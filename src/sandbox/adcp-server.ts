/**
 * The AdCP tool surface, built with the SDK's server builder.
 *
 * `get_adcp_capabilities` (and, for a 3.0 seller, `get_products`) go through the
 * SDK's spec-tool pipeline (schema-checked replies, auto-derived capabilities;
 * capabilities.ts adds what it cannot derive). The tools whose behaviour *is* the
 * point of the sandbox are registered as custom tools and answered by SellerCore,
 * which owns idempotency and task state:
 *   create_media_buy
 *   update_media_buy                          (cancel, pause/resume, reporting_webhook)
 *   get_media_buys, get_media_buy_delivery    (the book of live buys, live-buys.ts)
 *   sync_creatives, list_creatives            (the creative library and its reviews, creative-library.ts)
 *   get_task_status (3.1; 3.0 also tasks/get, tasks_get)   one handler
 *   list_tasks (3.1; 3.0 also tasks/list)                   one handler
 *   sandbox_respond                           (answers input-required / auth-required)
 *   get_products                              (a 3.1 seller's: the SDK would answer it in 3.0)
 *
 * Each call is served in a version (versions.ts): its request checked against that
 * version's schema, its reply shaped and checked as that version says (replies-31.ts).
 */
import { z } from 'zod';
import { createAdcpServer } from '@adcp/sdk/server/legacy/v5';
import { InMemoryStateStore, type AdcpServer } from '@adcp/sdk/server';
import { capabilitiesConfig } from './capabilities.js';
import type { SellerCore } from './core.js';
import type { GovernanceRegistry } from './governance-registry.js';
import type { ToolResult } from './wire.js';
import { SANDBOX_PRODUCTS, toAdcpProduct } from './products.js';
import { getProductsReply } from './products-reply.js';
import { reply31 } from './replies-31.js';
import { checkRequest } from './request-check.js';
import { operationIdRefusal, servedVersion, taskToolNames, type SellerVersion } from './versions.js';

export interface ToolCaller {
  /** Idempotency scope of the caller (one per credential). */
  principal: string;
}

/** What the seller speaks and declares (SandboxSellerOptions.adcpVersion, legacyTaskTools, governanceAware). */
export interface SellerSurface {
  version: SellerVersion;
  /** A 3.1 seller also answers the 3.0 task tool names. */
  legacyTaskTools: boolean;
  governanceAware?: boolean;
  /** `request_signing` to declare (signed-requests.ts): a seller that verifies signed requests. */
  requestSigning?: Record<string, unknown>;
}

export const SURFACE_3_0: SellerSurface = { version: '3.0', legacyTaskTools: true };

/**
 * The SDK insists on an explicit state store outside NODE_ENV=test/development.
 * Our state lives in SellerCore, so this store stays empty; one per seller.
 */
export const newUnusedStateStore = (): InMemoryStateStore => new InMemoryStateStore();

/**
 * Every custom tool publishes an empty, open input schema, as the SDK does for
 * its own tools: the SDK's buyer client strips any argument a tool's schema
 * doesn't declare, so declaring a few fields would silently drop the rest
 * (account, brand, push_notification_config…). Unknown keys must also survive
 * because the idempotency hash covers them. Our handlers validate arguments
 * and answer AdCP errors (INVALID_REQUEST) rather than MCP schema failures.
 */
const openInput = z.looseObject({});

type Args = Record<string, unknown>;
type Handler = (args: Args, version: SellerVersion) => ToolResult | Promise<ToolResult>;

/** A reply as the version it is served in shapes it (3.0: as built). */
export function onWire(version: SellerVersion, tool: string, result: ToolResult): ToolResult {
  return version === '3.1' ? reply31(tool, result) : result;
}

export function buildAdcpServer(
  core: SellerCore,
  agentUrl: string,
  caller: ToolCaller,
  stateStore: InMemoryStateStore,
  surface: SellerSurface = SURFACE_3_0,
  /** A governance-aware seller's registrations: it serves sync_governance (governance-registry.ts). */
  registry?: GovernanceRegistry,
): AdcpServer {
  // Every custom tool call is logged first, so tests can prove what reached the seller, then
  // checked against the schema of the version it is served in, as a real seller checks it
  // (request-check.ts): one off the schema is refused before anything of the sandbox sees it.
  const logged = (tool: string, handler: Handler) => async (args: Args): Promise<ToolResult> => {
    const served = servedVersion(args, surface.version);
    const version = typeof served === 'string' ? served : surface.version;
    const check = checkRequest(tool, args, version);
    core.stats.call(tool, args, check.issues);
    if (typeof served !== 'string') return served.refusal;
    if (check.refusal) return onWire(version, tool, check.refusal);
    const refusal = version === '3.1' ? operationIdRefusal(args) : undefined;
    return onWire(version, tool, refusal ?? (await handler(args, version)));
  };
  const tasks = taskToolNames(surface.version, surface.legacyTaskTools);
  const pollConfig = (tool: string) => ({
    description:
      `Poll an async task: {task_id, include_result? (default ${surface.version === '3.0' ? 'true' : 'false'}), include_history?} → ` +
      '{task_id, task_type, protocol, status, created_at, updated_at, completed_at?, result?, error?}.',
    inputSchema: openInput,
    handler: logged(tool, (args, version) => core.getTask(args, tool, version)),
  });
  const listConfig = (tool: string) => ({
    description:
      'List tasks: {filters?: {statuses, task_types, created_after/before, updated_after/before, task_ids, ' +
      'context_contains, has_webhook}, sort?: {field, direction}, pagination?: {max_results 1-100, cursor}}.',
    inputSchema: openInput,
    handler: logged(tool, (args) => core.listTasks(args)),
  });
  const v31 = surface.version === '3.1';

  const replay = core.replay;
  return withoutSlashNameWarnings(() => createAdcpServer({
    name: v31 ? 'AdCP sandbox seller (3.1)' : 'AdCP sandbox seller',
    version: '1.0.0',
    stateStore,
    instructions:
      `Sandbox seller (AdCP ${surface.version}) for testing buyers. get_products lists products whose id selects how create_media_buy ` +
      'behaves (instant, submitted, working, input-required, rejected, failed, auth-required, flaky). ' +
      'Answer input-required/auth-required tasks with sandbox_respond. Buys then live a compressed flight and report ' +
      'delivery to their reporting_webhook. Buys for governed accounts (account_id gov_…) ' +
      'need plan_id and a governance_context from the sandbox governance agent, else PERMISSION_DENIED.',
    // Requests and replies are checked against the bundled AdCP schemas in every environment,
    // as an SDK-built seller checks them. The SDK checks only the tools it registers
    // (get_products of a 3.0 seller); the custom tools' requests are checked by `logged` above.
    validation: { requests: 'strict', responses: 'strict' },
    // A seller without replay protection says so the SDK's way, which declares
    // `idempotency: {supported: false}` (tests only: the SDK refuses it outside NODE_ENV=test/development).
    ...(replay.supported ? {} : { idempotency: 'disabled' as const }),
    // The SDK speaks 3.0 only: a 3.1 seller answers get_products itself (products-reply.ts).
    ...(!v31 && {
      mediaBuy: {
        getProducts: async () => ({
          products: SANDBOX_PRODUCTS.map((p) => toAdcpProduct(p, agentUrl)),
        }) as never,
      },
    }),
    capabilities: capabilitiesConfig({
      version: surface.version,
      replay,
      ...(surface.governanceAware !== undefined && { governanceAware: surface.governanceAware }),
      ...(surface.requestSigning && { requestSigning: surface.requestSigning }),
    }) as never,
    customTools: {
      ...(v31 && {
        get_products: {
          description: 'The sandbox catalogue: every product, whose id selects how create_media_buy behaves.',
          inputSchema: openInput,
          annotations: { readOnlyHint: true },
          handler: logged('get_products', (args, version) => getProductsReply(args, agentUrl, version)),
        },
      }),
      create_media_buy: {
        description:
          'Create a media buy. Behaviour is chosen by packages[0].product_id (see get_products). ' +
          'Requires idempotency_key, account, brand, start_time, end_time, packages[]. Accounts whose account_id ' +
          'starts with gov_ are governed: also plan_id and the governance_context of an approved check_governance.',
        inputSchema: openInput,
        handler: logged('create_media_buy', (args, version) => core.createMediaBuy(args, caller.principal, version)),
      },
      update_media_buy: {
        description:
          'Update a media buy this seller created: {idempotency_key, account, media_buy_id, revision?} with canceled: true ' +
          '(+ cancellation_reason), paused: true|false, packages: [{package_id, paused}] or reporting_webhook. Nothing else.',
        inputSchema: openInput,
        handler: logged('update_media_buy', (args) => core.updateMediaBuy(args, caller.principal)),
      },
      get_media_buys: {
        description:
          'Media buys this seller created: {account?, media_buy_ids?, status_filter?, include_snapshot?, include_history?} → ' +
          'status, revision, valid_actions, packages (paused; snapshot with pacing_index, delivery_status), history, cancellation.',
        inputSchema: openInput,
        annotations: { readOnlyHint: true },
        handler: logged('get_media_buys', (args) => core.getMediaBuys(args)),
      },
      get_media_buy_delivery: {
        description:
          'Delivery of media buys: {account?, media_buy_ids?, status_filter? (default ["active"]), start_date?, end_date?' +
          `${v31 ? ', time_granularity? ("daily"), include_window_breakdown?' : ''}} → ` +
          `reporting_period, currency, media_buy_deliveries[]${v31 ? ' (windows[] when asked)' : ''}, aggregated_totals.`,
        inputSchema: openInput,
        annotations: { readOnlyHint: true },
        handler: logged('get_media_buy_delivery', (args, version) => core.getMediaBuyDelivery(args, version)),
      },
      sync_creatives: {
        description:
          'Sync creatives to the library: {idempotency_key, account, creatives: [{creative_id, name, format_id, assets}], assignments?: [{creative_id, package_id}]}. ' +
          'Each is reviewed shortly after: rejected when its name contains "reject", never reviewed when it contains "hold", approved otherwise. ' +
          'A creative named with "queue" makes the whole sync answer submitted, done later as a task. ' +
          'A buy of sandbox_awaiting_creatives starts once every package has an approved creative.',
        inputSchema: openInput,
        handler: logged('sync_creatives', (args, version) => core.syncCreatives(args, caller.principal, version)),
      },
      list_creatives: {
        description: 'Creatives in the library: {account?, filters?: {creative_ids, statuses, updated_after, updated_before, media_buy_ids, name_contains}, pagination?, include_assignments?}.',
        inputSchema: openInput,
        annotations: { readOnlyHint: true },
        handler: logged('list_creatives', (args) => core.listCreatives(args)),
      },
      ...Object.fromEntries(tasks.poll.map((tool) => [tool, pollConfig(tool)])),
      ...Object.fromEntries(tasks.list.map((tool) => [tool, listConfig(tool)])),
      ...(registry && {
        sync_governance: {
          description:
            'Register the governance agent of accounts: {idempotency_key, accounts: [{account, governance_agents: [{url (https), ' +
            'authentication: {schemes: ["Bearer"], credentials (32+ characters)}}]}]}. The last registration of an account wins.',
          inputSchema: openInput,
          handler: logged('sync_governance', (args) => registry.sync(args)),
        },
      }),
      sandbox_respond: {
        description:
          'Sandbox-only continuation for a task in input-required or auth-required: ' +
          '{task_id, approve, message?, then?}. approve:true → completed (or via submitted/working), false → rejected.',
        inputSchema: openInput,
        handler: logged('sandbox_respond', (args) => core.respond(args)),
      },
    },
  }));
}

/**
 * The MCP SDK warns (five console lines) whenever a tool name contains "/".
 * `tasks/get` and `tasks/list` are the AdCP 3.0 names buyers call (the SDK's
 * own TaskExecutor polls `tasks/get`), and we build a server per request, so
 * that warning would flood the log. Construction is synchronous, so filtering
 * console.warn for its duration touches nothing else; other warnings pass.
 */
export function withoutSlashNameWarnings<T>(build: () => T): T {
  const warn = console.warn;
  let inBlock = false;
  console.warn = (...args: unknown[]) => {
    const line = typeof args[0] === 'string' ? args[0] : '';
    if (/^Tool name validation warning for "tasks\//.test(line)) {
      inBlock = true;
      return;
    }
    if (inBlock) {
      if (line.startsWith('See SEP')) inBlock = false;
      return;
    }
    warn(...args);
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}
