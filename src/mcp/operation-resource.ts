/** `adcp-orchestrator://operations/{id}`: an operation with its events, as get_operation answers it. */
import { EngineError } from '../engine/errors.js';
import { listOperations, showOperation } from '../engine/operation-reads.js';
import type { ResourceKind } from './resources.js';

const PREFIX = 'adcp-orchestrator://operations/';
/** What resources/list shows: the newest operations. */
const LISTED = 50;

export const operationResource: ResourceKind = {
  prefix: PREFIX,
  template: {
    uriTemplate: `${PREFIX}{id}`,
    name: 'operation',
    title: 'An operation',
    description: 'One operation with its events, as get_operation answers it. Subscribe to hear when it changes.',
    mimeType: 'application/json',
  },
  async read(scope, id) {
    try {
      return await showOperation(scope.services.store, scope.auth.tenantId, id);
    } catch (err) {
      if (err instanceof EngineError && err.httpStatus === 404) return undefined;
      throw err;
    }
  },
  changed: (change) => (change.many ? 'all' : change.operationIds),
  async list(scope) {
    const page = await listOperations(scope.services.store, scope.auth.tenantId, { limit: LISTED });
    return page.operations.map((op) => ({ uri: operationUri(op.id), name: `${op.type} ${op.id}`, description: `${op.status} at agent ${op.agent_id}`, mimeType: 'application/json' }));
  },
};

export const operationUri = (id: string) => `${PREFIX}${encodeURIComponent(id)}`;
