/**
 * Operations as MCP resources, `adcp-orchestrator://operations/{id}` (the JSON of
 * GET /v1/operations/:id), subscribable: a session that subscribes gets
 * `notifications/resources/updated` on its GET stream whenever the operation changes.
 * Changes come from the tenant's live feed (src/notify/live-source.ts), which carries
 * every instance's changes, so a subscriber hears of a change wherever it was made.
 * One feed subscription per session, opened with its first resource subscription.
 *
 * Another tenant's operation is "not found", to read or to subscribe to.
 */
import { ErrorCode, McpError, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { EngineError } from '../engine/errors.js';
import { listOperations, showOperation } from '../engine/operation-reads.js';
import type { ToolContext } from './context.js';

const SCHEME = 'adcp-orchestrator://operations/';
/** What resources/list shows: the newest operations (the template reaches any of them). */
const LISTED = 50;

export const OPERATION_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${SCHEME}{id}`,
  name: 'operation',
  title: 'An operation',
  description: 'One operation with its events, as get_operation answers it. Subscribe to hear when it changes.',
  mimeType: 'application/json',
};

export const operationUri = (id: string) => `${SCHEME}${encodeURIComponent(id)}`;

function operationIdOf(uri: string): string {
  const id = uri.startsWith(SCHEME) ? uri.slice(SCHEME.length) : '';
  if (!/^[^/?#]{1,300}$/.test(id)) throw notFound(uri);
  try {
    return decodeURIComponent(id);
  } catch {
    throw notFound(uri);
  }
}

// -32002 is the MCP spec's "resource not found".
const notFound = (uri: string) => new McpError(-32002, `resource not found: ${uri.slice(0, 300)}`);

export class OperationResources {
  private readonly subscribed = new Set<string>();
  private feed: { close(): void } | undefined;
  private closed = false;

  constructor(
    private readonly scope: Omit<ToolContext, 'signal'>,
    /** Sends notifications/resources/updated on the session's GET stream. */
    private readonly updated: (uri: string) => Promise<void>,
  ) {}

  async list(): Promise<Resource[]> {
    const page = await listOperations(this.scope.services.store, this.scope.auth.tenantId, { limit: LISTED });
    return page.operations.map((op) => ({ uri: operationUri(op.id), name: `${op.type} ${op.id}`, description: `${op.status} at agent ${op.agent_id}`, mimeType: 'application/json' }));
  }

  async read(uri: string): Promise<ReadResourceResult> {
    const id = operationIdOf(uri);
    try {
      const op = await showOperation(this.scope.services.store, this.scope.auth.tenantId, id);
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(op) }] };
    } catch (err) {
      if (err instanceof EngineError && err.httpStatus === 404) throw notFound(uri);
      throw err;
    }
  }

  async subscribe(uri: string): Promise<void> {
    const id = operationIdOf(uri);
    if (!(await this.scope.services.store.operations.getForTenant(this.scope.auth.tenantId, id))) throw notFound(uri);
    if (this.closed) throw new McpError(ErrorCode.ConnectionClosed, 'the session is closing');
    this.subscribed.add(id);
    if (!this.feed) await this.follow();
  }

  async unsubscribe(uri: string): Promise<void> {
    this.subscribed.delete(operationIdOf(uri));
    if (this.subscribed.size === 0) {
      this.feed?.close();
      this.feed = undefined;
    }
  }

  close(): void {
    this.closed = true;
    this.feed?.close();
    this.feed = undefined;
    this.subscribed.clear();
  }

  /** From now on (the feed's current position), each change of a subscribed operation is announced once. */
  private async follow(): Promise<void> {
    const { live, log } = this.scope.services;
    const tenantId = this.scope.auth.tenantId;
    const position = await live.position(tenantId);
    if (this.feed || this.closed) return;
    this.feed = live.subscribe(
      tenantId,
      position,
      async (change) => {
        const ids = change.many ? [...this.subscribed] : change.operationIds.filter((id) => this.subscribed.has(id));
        for (const id of ids) await this.updated(operationUri(id)).catch((err) => log.debug({ err }, 'MCP: resource update not sent'));
      },
      () => {
        this.feed = undefined;
      },
    );
  }
}
