/**
 * `adcp-orchestrator ops watch [ID]`: changes live over Server-Sent Events, one line each.
 *
 * With an id: its history so far, then its changes as they happen; exits 0 when it
 * ends `completed`, 1 when it ends otherwise (at once if it already has). The
 * stream is opened *before* the history is read, so a change lands in one or the
 * other (the server fixes the stream's starting point before answering); a change
 * in both is printed once (events are told apart by their id). After a drop the
 * stream resumes after the last notification (Last-Event-ID); if none had
 * arrived yet, the history is read again for what the gap may hold.
 *
 * Without an id: every change of the tenant's operations, filtered by the status
 * or the need for a person after the change, until interrupted.
 */
import type { Command } from 'commander';
import { isOperationStatus, isTerminal, OPERATION_STATUSES } from '../../domain/status.js';
import { notificationTypeFor } from '../../domain/notification-types.js';
import { apiOptions, apiTarget, callApi, type ApiCommandOptions, type ApiTarget } from '../api-client.js';
import { eventLine, notificationLine } from '../change-lines.js';
import { exitAfterFlush, UsageError } from '../cli-errors.js';
import { followEvents, type FollowOptions, type Notification } from '../event-stream.js';
import { endedWith, type OperationView } from '../operation-view.js';

interface WatchOptions extends ApiCommandOptions {
  status?: string;
  needsInput?: boolean;
}

export function registerWatchCommand(ops: Command): void {
  apiOptions(
    ops
      .command('watch [id]')
      .description('follow one operation until it ends (exit 0 completed, 1 otherwise), or without an id every change of the tenant')
      .option('--status <status>', 'without an id: only changes that leave an operation in this status')
      .option('--needs-input', 'without an id: only changes that leave an operation waiting for a person'),
  ).action(async (id: string | undefined, o: WatchOptions) => {
    if (id !== undefined && (o.status !== undefined || o.needsInput)) throw new UsageError('--status and --needs-input filter the stream of all operations; leave them out when watching one');
    if (o.status !== undefined && !isOperationStatus(o.status)) throw new UsageError(`--status must be one of ${OPERATION_STATUSES.join(', ')} (got '${o.status}')`);
    const target = apiTarget(o);
    const connection = connectionNotes();
    if (id === undefined) {
      await followEvents(target, { ...connection, onNotification: (n) => void (wanted(n, o) && print(n, o.json)) });
      return;
    }
    await exitAfterFlush(await watchOne(target, id, Boolean(o.json), connection));
  });
}

function wanted(n: Notification, o: WatchOptions): boolean {
  const op = n.data.operation;
  // A campaign's notification has no operation: it is shown unless a filter on operations was asked for.
  if (!op) return o.status === undefined && !o.needsInput;
  if (o.status !== undefined && op.status !== o.status) return false;
  if (o.needsInput && op.needs_input !== true) return false;
  return true;
}

function print(n: Notification, json: boolean | undefined): void {
  process.stdout.write(json ? `${JSON.stringify(n)}\n` : notificationLine(n));
}

/** Resolves with the exit code once the operation has ended. */
async function watchOne(target: ApiTarget, id: string, json: boolean, connection: Pick<FollowOptions, 'onRetrying' | 'onReconnected'>): Promise<number> {
  const printed = new Set<number>();
  let exitCode: number | undefined;
  const ended = (status: string) => {
    if (isOperationStatus(status) && isTerminal(status)) exitCode = status === 'completed' ? 0 : 1;
    return exitCode !== undefined ? ('stop' as const) : undefined;
  };

  /** The history: all of it the first time; after a gap, what it holds that a notification would have told. */
  const readHistory = async (first: boolean) => {
    const op = await callApi<OperationView>(target, 'GET', `/v1/operations/${encodeURIComponent(id)}`);
    const unseen = (op.events ?? []).filter((e) => !printed.has(e.id));
    const shown = first ? unseen : unseen.filter((e) => notificationTypeFor({ kind: e.kind, to_status: e.to }) !== null);
    // As JSON the history is the operation itself (with its events), ahead of the notifications.
    if (json && (first || shown.length > 0)) process.stdout.write(`${JSON.stringify(op)}\n`);
    for (const e of unseen) {
      printed.add(e.id);
      if (!json && shown.includes(e)) process.stdout.write(eventLine(op.id, e, undefined, endedWith(op, e)));
    }
    return ended(op.status);
  };

  let first = true;
  await followEvents(target, {
    ...connection,
    onOpen: async ({ resumed }) => {
      if (resumed) return;
      const verdict = await readHistory(first);
      first = false;
      return verdict;
    },
    onNotification: (n) => {
      if (!n.data.operation || !n.data.event || n.data.operation.id !== id) return;
      if (!printed.has(n.data.event.id)) {
        printed.add(n.data.event.id);
        print(n, json);
      }
      return ended(n.data.operation.status);
    },
  });
  return exitCode ?? 1;
}

/** Dropped connections are said on standard error, once per outage, so standard output stays one line per change. */
function connectionNotes(): Pick<FollowOptions, 'onRetrying' | 'onReconnected'> {
  return {
    onRetrying: (reason) => process.stderr.write(`connection lost (${reason}); reconnecting…\n`),
    onReconnected: () => process.stderr.write('reconnected\n'),
  };
}
