/** An operation as the API answers it (the parts the CLI shows), its one-line summary, and JSON output. */
import type { StreamEvent } from './event-stream.js';

export interface OperationView {
  id: string;
  type: string;
  agent_id: string;
  status: string;
  task_id: string | null;
  needs_input: boolean;
  input_message?: string | null;
  input_request?: { kind?: string; message?: string; allowed?: string[] } | null;
  stalled: boolean;
  stalled_reason?: string | null;
  error?: unknown;
  result?: unknown;
  parent_id?: string | null;
  created_at: string;
  updated_at: string;
  completed_at?: string | null;
  events?: StreamEvent[];
}

export const operationLine = (o: OperationView): string =>
  `${o.id}  ${o.type.padEnd(18)} ${o.status.padEnd(15)} ${o.task_id ?? '-'}${o.needs_input ? '  [needs input]' : ''}${o.stalled ? '  [stalled]' : ''}\n`;

/** The operation's error beside the event that ended it failed or rejected (as its notification carries it). */
export function endedWith(op: OperationView, e: { to: string | null }): { error?: unknown } {
  return e.to === op.status && (op.status === 'failed' || op.status === 'rejected') ? { error: op.error } : {};
}

/** `--json`: the API's answer as it came, indented (one object; `ops watch` prints one per line instead). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
