/**
 * MCP resources, subscribable: a session that subscribes to one gets
 * `notifications/resources/updated` on its GET stream whenever it changes. Changes come
 * from the tenant's live feed (src/notify/live-source.ts), which carries every
 * instance's changes, so a subscriber hears of a change wherever it was made. One feed
 * subscription per session, opened with its first resource subscription.
 *
 * What a kind of resource is (its URI, how it is read, which changes concern it) is a
 * ResourceKind; the kinds are listed in RESOURCE_KINDS. Another tenant's resource is
 * "not found", to read or to subscribe to.
 */
import { ErrorCode, McpError, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { LiveChange } from '../notify/live-source.js';
import type { ToolContext } from './context.js';
import { mediaBuyResource } from './media-buy-resource.js';
import { operationResource } from './operation-resource.js';

export type ResourceScope = Omit<ToolContext, 'signal'>;

export interface ResourceKind {
  /** `adcp-orchestrator://<kind>/`: the URI is this and the id, URI-encoded. */
  prefix: string;
  template: ResourceTemplate;
  /** The resource's JSON, or undefined when the tenant has no such thing. */
  read(scope: ResourceScope, id: string): Promise<unknown | undefined>;
  /** Which of this kind's ids a live change concerns ('all': too many to name). */
  changed(change: LiveChange): string[] | 'all';
  /** What resources/list shows of this kind (the template reaches the rest). */
  list(scope: ResourceScope): Promise<Resource[]>;
}

/** Every kind served. A kind is one small file beside operation-resource.ts and one entry here. */
export const RESOURCE_KINDS: readonly ResourceKind[] = [operationResource, mediaBuyResource];

export const resourceUri = (kind: ResourceKind, id: string) => `${kind.prefix}${encodeURIComponent(id)}`;

// -32002 is the MCP spec's "resource not found".
const notFound = (uri: string) => new McpError(-32002, `resource not found: ${uri.slice(0, 300)}`);

function parse(uri: string): { kind: ResourceKind; id: string } {
  const kind = RESOURCE_KINDS.find((k) => uri.startsWith(k.prefix));
  const raw = kind ? uri.slice(kind.prefix.length) : '';
  if (!kind || !/^[^/?#]{1,300}$/.test(raw)) throw notFound(uri);
  try {
    return { kind, id: decodeURIComponent(raw) };
  } catch {
    throw notFound(uri);
  }
}

export class SessionResources {
  /** Subscribed URIs. */
  private readonly subscribed = new Set<string>();
  private feed: { close(): void } | undefined;
  private closed = false;

  constructor(
    private readonly scope: ResourceScope,
    /** Sends notifications/resources/updated on the session's GET stream. */
    private readonly updated: (uri: string) => Promise<void>,
  ) {}

  templates(): ResourceTemplate[] {
    return RESOURCE_KINDS.map((k) => k.template);
  }

  async list(): Promise<Resource[]> {
    return (await Promise.all(RESOURCE_KINDS.map((k) => k.list(this.scope)))).flat();
  }

  async read(uri: string): Promise<ReadResourceResult> {
    const { kind, id } = parse(uri);
    const json = await kind.read(this.scope, id);
    if (json === undefined) throw notFound(uri);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(json) }] };
  }

  async subscribe(uri: string): Promise<void> {
    const { kind, id } = parse(uri);
    if ((await kind.read(this.scope, id)) === undefined) throw notFound(uri);
    if (this.closed) throw new McpError(ErrorCode.ConnectionClosed, 'the session is closing');
    this.subscribed.add(resourceUri(kind, id));
    if (!this.feed) await this.follow();
  }

  async unsubscribe(uri: string): Promise<void> {
    const { kind, id } = parse(uri);
    this.subscribed.delete(resourceUri(kind, id));
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

  /** From now on (the feed's current position), each change of a subscribed resource is announced. */
  private async follow(): Promise<void> {
    const { live, log } = this.scope.services;
    const tenantId = this.scope.auth.tenantId;
    const position = await live.position(tenantId);
    if (this.feed || this.closed) return;
    this.feed = live.subscribe(
      tenantId,
      position,
      async (change) => {
        for (const uri of this.concerned(change)) await this.updated(uri).catch((err) => log.debug({ err }, 'MCP: resource update not sent'));
      },
      () => {
        this.feed = undefined;
      },
    );
  }

  private concerned(change: LiveChange): string[] {
    const uris: string[] = [];
    for (const kind of RESOURCE_KINDS) {
      const ids = kind.changed(change);
      if (ids === 'all') uris.push(...[...this.subscribed].filter((u) => u.startsWith(kind.prefix)));
      else for (const id of ids) if (this.subscribed.has(resourceUri(kind, id))) uris.push(resourceUri(kind, id));
    }
    return uris;
  }
}
