/**
 * The seller's AdCP server, built with the SDK's `createAdcpServer` and its
 * strict request and response validation: every media-buy and creative tool is
 * a first-class domain handler, so the framework validates each request before
 * the handler runs (a bad one is answered VALIDATION_ERROR) and each reply
 * before it leaves. Idempotency is the SDK's store (memory backend), scoped per
 * account. Only the task tools are custom (task-tools.ts validates those).
 *
 * All state lives outside the server (the book, the tasks, the library, the
 * idempotency store), so the HTTP front may build as many servers as it needs.
 */
import { createAdcpServer } from '@adcp/sdk/server/legacy/v5';
import type { AdcpServer, IdempotencyStore, InMemoryStateStore } from '@adcp/sdk/server';
import { resolveAccount, type SellerAccount } from './accounts.js';
import { products } from './catalog.js';
import { creativeHandlers } from './creative-handlers.js';
import type { CreativeLibrary } from './creatives.js';
import { mediaBuyHandlers } from './media-buy-handlers.js';
import type { MediaBuyBook } from './media-buys.js';
import { taskTools } from './task-tools.js';
import type { TaskBook } from './tasks.js';

export interface SellerState {
  agentUrl: string;
  book: MediaBuyBook;
  tasks: TaskBook;
  creatives: CreativeLibrary;
  idempotency: IdempotencyStore;
  /** The SDK wants one outside NODE_ENV=test; nothing of ours is kept in it. */
  stateStore: InMemoryStateStore;
  now: () => number;
}

export function buildSellerServer(state: SellerState): AdcpServer {
  const media = mediaBuyHandlers(state);
  const creative = creativeHandlers(state);
  // The handlers are typed loosely (JSON in, JSON out): the framework's validators, not
  // TypeScript, are what this seller relies on for the wire shapes.
  const loose = <F>(f: unknown): F => f as F;
  return withoutSlashNameNotice(() => createAdcpServer<SellerAccount>({
    name: 'adcp-orchestrator strict SDK seller (tests)',
    version: '1.0.0',
    stateStore: state.stateStore,
    idempotency: state.idempotency,
    validation: { requests: 'strict', responses: 'strict' },
    resolveAccount: async (ref) => resolveAccount(ref),
    resolveSessionKey: ({ account }) => account?.owner,
    mediaBuy: {
      getProducts: loose(async () => ({ products: products(state.agentUrl) })),
      createMediaBuy: loose(media.createMediaBuy),
      updateMediaBuy: loose(media.updateMediaBuy),
      getMediaBuys: loose(media.getMediaBuys),
      getMediaBuyDelivery: loose(media.getMediaBuyDelivery),
      syncCreatives: loose(creative.syncCreatives),
      listCreatives: loose(creative.listCreatives),
    },
    customTools: taskTools(state.tasks),
  }));
}

/**
 * `tasks/get` and `tasks/list` are the AdCP 3.0 names, but MCP's tool-name rules have no
 * "/": the MCP SDK registers them anyway and prints a five-line notice for each, every
 * time a server is built. Only that notice is dropped, only while building; any other
 * console.warn goes through.
 */
function withoutSlashNameNotice<T>(build: () => T): T {
  const warn = console.warn;
  let inNotice = false;
  console.warn = (...args: unknown[]): void => {
    const line = typeof args[0] === 'string' ? args[0] : '';
    if (line.startsWith('Tool name validation warning for "tasks/')) inNotice = true;
    if (!inNotice) return warn(...args);
    if (line.startsWith('See SEP')) inNotice = false;
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}
