/**
 * Answers to an open task, as a seller takes them on an A2A continuation (a new
 * message on the taskId + contextId of the reply that asked). The answer must be
 * the full, valid input of the same skill (valid for its schema, then for the
 * sandbox's own rules): a request that is not valid is asked again, with what is
 * wrong; a valid one completes the task with a media buy built from that input,
 * or moves it on to `submitted` when the input asks for it
 * (`ext.sandbox.then: "submitted"`), completing later as a submitted buy does.
 *
 * For `auth-required`, the answer must arrive with the refreshed credential when
 * the seller was started with one (CoreOptions.freshToken).
 */
import { checkCreateRequest } from './behaviours.js';
import { checkRequest } from './request-check.js';
import type { SellerCore } from './core.js';
import { isTerminalStatus } from './tasks.js';
import type { SellerVersion } from './versions.js';
import { isPlainObject } from './wire.js';

export type ContinuationOutcome =
  /** The task stays waiting; `payload` says why (the reply's AdCP body). */
  | { kind: 'asked_again'; payload: Record<string, unknown> }
  | { kind: 'completed'; payload: Record<string, unknown> }
  | { kind: 'submitted'; payload: Record<string, unknown> };

/** Why a message cannot be taken on this task at all (answered as a JSON-RPC refusal). */
export function refusalFor(core: SellerCore, taskId: string): string | null {
  const task = core.tasks.get(taskId);
  if (!task) return 'the seller no longer has this task';
  if (task.status !== 'input-required' && task.status !== 'auth-required') return `the task is ${task.status} and takes no more input`;
  return null;
}

export function continueTask(
  core: SellerCore,
  taskId: string,
  skill: string,
  input: Record<string, unknown>,
  opts: { submittedDelayMs: number; version?: SellerVersion },
): ContinuationOutcome {
  const task = core.tasks.get(taskId)!;
  const echo = input.context !== undefined ? { context: input.context } : {};
  const askAgain = (message: string, error?: { code: string; message: string; field?: string }): ContinuationOutcome => ({
    kind: 'asked_again',
    payload: { status: task.status, task_id: taskId, message, ...(error && { errors: [error] }), ...echo },
  });
  if (skill !== task.task_type) return askAgain(`answer with the same skill (${task.task_type}) and its full input`);
  if (task.status === 'auth-required' && !core.credentialIsFresh() && core.requiresFreshCredential()) {
    return askAgain('Sandbox seller still needs fresh credentials for this buy.');
  }
  // Checked against its schema first, as every request is (request-check.ts).
  const check = checkRequest(skill, input, opts.version);
  if (!check.valid) {
    const first = check.issues[0];
    const message = first ? `${first.pointer} ${first.message}` : 'failed schema validation';
    return askAgain(`Sandbox: the answer is not a valid ${task.task_type} request: ${message}`, { code: 'VALIDATION_ERROR', message, ...(first && { field: first.pointer }) });
  }
  const accepted = checkCreateRequest(input);
  if ('code' in accepted) {
    return askAgain(`Sandbox: the answer is not a valid ${task.task_type} request: ${accepted.message}`, {
      code: accepted.code,
      message: accepted.message,
      ...(accepted.field && { field: accepted.field }),
    });
  }
  // What is bought is what the answer says: the full input replaces the first request.
  task.request = input;
  if (thenOf(input) === 'submitted') {
    const message = 'Sandbox: answer taken; the buy is queued for review and completes later.';
    core.tasks.transition(taskId, 'submitted', { message });
    core.tasks.schedule(opts.submittedDelayMs, () => {
      const current = core.tasks.get(taskId);
      if (current && !isTerminalStatus(current.status)) core.completeTask(taskId);
    });
    return { kind: 'submitted', payload: { status: 'submitted', task_id: taskId, message, ...echo } };
  }
  core.completeTask(taskId);
  const result = core.tasks.get(taskId)?.result ?? {};
  return { kind: 'completed', payload: { ...result, task_id: taskId, ...echo } };
}

function thenOf(input: Record<string, unknown>): unknown {
  const ext = input.ext;
  return isPlainObject(ext) && isPlainObject(ext.sandbox) ? ext.sandbox.then : undefined;
}
