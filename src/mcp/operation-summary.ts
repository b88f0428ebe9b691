/**
 * One paragraph a model can act on, beside the operation JSON of a tool result: what
 * happened, what is awaited (and from whom), and where a person acts. A model's key
 * can buy, but a spend held for approval, governance conditions or a seller's question
 * waits for a person: the summary says so, with the dashboard link.
 */
import type { OperationJson } from '../domain/operation-json.js';
import type { DashboardLinks } from './links.js';
import { operationUri } from './operation-resource.js';

type OperationLike = Pick<OperationJson, 'id' | 'type' | 'agent_id' | 'status' | 'needs_input' | 'stalled' | 'stalled_reason' | 'error' | 'result'> & {
  input_request?: unknown;
  seller_cancel?: { id: string; status: string };
};

const WAITING_FOR: Record<string, string> = {
  spend_approval: 'a spend approval: the buy is held and nothing has been sent to the seller',
  governance_conditions: 'a decision on the governance agent’s conditions: nothing has been sent to the seller',
  seller_input: 'an answer to the seller’s question',
  creative_rejected: 'a corrected creative after the seller rejected one',
};

export function operationSummary(op: OperationLike, links: DashboardLinks): string {
  const head = `Operation ${op.id} (${op.type} at agent ${op.agent_id})`;
  const link = links.operation(op.id);
  const parts: string[] = [];
  if (op.needs_input) {
    const request = asObject(op.input_request);
    const kind = typeof request.kind === 'string' ? request.kind : 'seller_input';
    const message = typeof request.message === 'string' ? ` (“${request.message}”)` : '';
    parts.push(`${head} waits for a person: ${WAITING_FOR[kind] ?? kind}${message}.`);
    const act = kind === 'spend_approval' ? 'approve (or reject) it' : 'decide';
    parts.push(`A person must ${act} in the dashboard: ${link} (everything waiting is at ${links.inbox()}); an approver key can also answer with answer_operation.`);
    // Not "call wait_for_operation": it answers at once while a person is awaited, so a model would spin on it.
    parts.push(
      `Tell the user. Until a person has decided, wait_for_operation answers at once; read it later with get_operation (or subscribe to ${operationUri(op.id)}) to learn of the decision.`,
    );
  } else if (op.status === 'completed') {
    const mediaBuy = asObject(op.result).media_buy_id;
    const created = op.type === 'create_media_buy' && typeof mediaBuy === 'string' ? `: media buy ${mediaBuy} was created` : '';
    parts.push(`${head} completed${created}. Details: ${link}.`);
  } else if (op.status === 'failed' || op.status === 'rejected') {
    parts.push(`${head} ended ${op.status}${errorText(op.error)}. Details: ${link}.`);
  } else if (op.status === 'canceled') {
    parts.push(`${head} was canceled${errorText(op.error)}. Details: ${link}.`);
  } else {
    const note = op.status === 'submitted' ? ' (queued at the seller; it may take hours or days, for example a publisher’s review)' : '';
    parts.push(`${head} is ${op.status}${note}.`);
    parts.push(`Call wait_for_operation with id ${op.id} to follow it, or get_operation later; nothing needs to be sent again.`);
  }
  if (op.seller_cancel) parts.push(`The media buy is being canceled at the seller by operation ${op.seller_cancel.id} (${op.seller_cancel.status}).`);
  if (op.stalled) parts.push(`It is stalled${op.stalled_reason ? ` (${op.stalled_reason})` : ''}: a person should look at ${link}.`);
  return parts.join(' ');
}

function errorText(error: unknown): string {
  const e = asObject(error);
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : undefined;
  if (!code && !message) return '';
  return ` (${[code, message].filter(Boolean).join(': ')})`;
}

function asObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
