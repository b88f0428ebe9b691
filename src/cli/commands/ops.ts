/** `adcp-orchestrator ops list|show|respond|cancel` (and `watch`, in ops-watch.ts), through the HTTP API. */
import type { Command } from 'commander';
import { apiOptions, apiTarget, callApi, type ApiCommandOptions } from '../api-client.js';
import { eventLine } from '../change-lines.js';
import { UsageError } from '../cli-errors.js';
import { endedWith, operationLine, printJson, type OperationView } from '../operation-view.js';
import { registerWatchCommand } from './ops-watch.js';

const opPath = (id: string, rest = '') => `/v1/operations/${encodeURIComponent(id)}${rest}`;

export function registerOpsCommands(program: Command): void {
  const ops = program.command('ops').description('inspect, follow, answer and cancel operations');

  apiOptions(
    ops
      .command('list')
      .description('list operations, newest first')
      .option('--status <status>', 'only this status')
      .option('--type <task>', 'only this AdCP task')
      .option('--agent <id>', "only this agent's")
      .option('--needs-input', 'only those waiting for a person')
      .option('--stalled', 'only stalled ones')
      .option('--limit <n>', 'how many', '50')
      .option('--cursor <cursor>', 'the next page (next_cursor of the previous one)'),
  ).action(async (o: ApiCommandOptions & { status?: string; type?: string; agent?: string; needsInput?: boolean; stalled?: boolean; limit: string; cursor?: string }) => {
    const q = new URLSearchParams({ limit: o.limit });
    if (o.status) q.set('status', o.status);
    if (o.type) q.set('type', o.type);
    if (o.agent) q.set('agent_id', o.agent);
    if (o.needsInput) q.set('needs_input', 'true');
    if (o.stalled) q.set('stalled', 'true');
    if (o.cursor) q.set('cursor', o.cursor);
    const page = await callApi<{ operations: OperationView[]; next_cursor: string | null }>(apiTarget(o), 'GET', `/v1/operations?${q}`);
    if (o.json) return printJson(page);
    for (const op of page.operations) process.stdout.write(operationLine(op));
    if (page.next_cursor) process.stderr.write(`more: --cursor ${page.next_cursor}\n`);
  });

  apiOptions(ops.command('show <id>').description('show an operation and its history')).action(async (id: string, o: ApiCommandOptions) => {
    const op = await callApi<OperationView>(apiTarget(o), 'GET', opPath(id));
    if (o.json) return printJson(op);
    process.stdout.write(operationLine(op));
    for (const [label, value] of facts(op)) process.stdout.write(`  ${label.padEnd(9)} ${value}\n`);
    for (const e of op.events ?? []) process.stdout.write(`  ${eventLine(op.id, e, undefined, endedWith(op, e))}`);
  });

  registerWatchCommand(ops);

  apiOptions(
    ops
      .command('respond <id>')
      .description('answer what an operation waits for: exactly one of --approve, --reject, --params')
      .option('--approve', 'approve (a held buy is sent; governance conditions are applied)')
      .option('--reject', 'reject: the operation ends without a purchase (a spend approval or governance conditions: give --message saying why)')
      .option('--params <json>', 'respond with corrected request params (a JSON object)')
      .option('--message <text>', 'a note recorded with the answer'),
  ).action(async (id: string, o: ApiCommandOptions & { approve?: boolean; reject?: boolean; params?: string; message?: string }) => {
    const body = answerBody(o);
    // The answer is the operation; or, when the answer sent a corrected request as a new one, that child.
    const op = await callApi<OperationView>(apiTarget(o), 'POST', opPath(id, '/input'), body);
    if (o.json) return printJson(op);
    process.stdout.write(op.id === id ? operationLine(op) : `child  ${operationLine(op)}`);
  });

  apiOptions(
    ops
      .command('cancel <id>')
      .description('stop an operation; a created media buy is canceled at the seller by a child operation')
      .option('--reason <text>', 'why (recorded, and sent to the seller when it is told)'),
  ).action(async (id: string, o: ApiCommandOptions & { reason?: string }) => {
    const op = await callApi<OperationView & { seller_cancel?: OperationView }>(apiTarget(o), 'POST', opPath(id, '/cancel'), o.reason === undefined ? {} : { reason: o.reason });
    if (o.json) return printJson(op);
    process.stdout.write(operationLine(op));
    if (op.seller_cancel) process.stdout.write(`seller_cancel  ${operationLine(op.seller_cancel)}`);
  });
}

/** The body of POST /v1/operations/:id/input, or a usage error before anything is sent. */
export function answerBody(o: { approve?: boolean; reject?: boolean; params?: string; message?: string }): {
  decision: 'approve' | 'reject' | 'respond';
  message?: string;
  params?: Record<string, unknown>;
} {
  const chosen = [o.approve && '--approve', o.reject && '--reject', o.params !== undefined && '--params'].filter(Boolean);
  if (chosen.length !== 1) {
    throw new UsageError(chosen.length === 0 ? 'give one of --approve, --reject or --params JSON' : `give only one of --approve, --reject, --params (got ${chosen.join(', ')})`);
  }
  const message = o.message === undefined ? {} : { message: o.message };
  if (o.approve) return { decision: 'approve', ...message };
  if (o.reject) return { decision: 'reject', ...message };
  let params: unknown;
  try {
    params = JSON.parse(o.params as string);
  } catch (err) {
    throw new UsageError(`--params is not valid JSON: ${(err as Error).message}`);
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) throw new UsageError('--params must be a JSON object ({"field": value, …})');
  return { decision: 'respond', params: params as Record<string, unknown>, ...message };
}

function facts(op: OperationView): Array<[string, string]> {
  const rows: Array<[string, string]> = [['agent', op.agent_id], ['created', op.created_at], ['updated', op.updated_at]];
  if (op.completed_at) rows.push(['ended', op.completed_at]);
  if (op.parent_id) rows.push(['parent', op.parent_id]);
  const request = op.input_request;
  if (op.needs_input) rows.push(['waits', `${request?.message ?? op.input_message ?? 'for input'}${request?.allowed ? `  (allowed: ${request.allowed.join(', ')})` : ''}`]);
  if (op.stalled) rows.push(['stalled', op.stalled_reason ?? 'yes']);
  if (op.error) rows.push(['error', JSON.stringify(op.error)]);
  if (op.result) rows.push(['result', JSON.stringify(op.result)]);
  return rows;
}
