/**
 * Matching an answer to the question it answers (docs/ARCHITECTURE.md, People in the loop).
 * A person answers what they were shown; if the seller has asked something else since,
 * that answer is not taken for the new question. A client that names no question
 * (`question_id`) answers whatever is asked when its answer is taken.
 */
import type { InputRequest } from '../domain/input-request.js';
import { questionIdOf } from '../domain/input-question.js';
import type { OperationRow } from '../store/index.js';
import { EngineError } from './errors.js';
import { parseInputRequest } from './input-requests.js';

/** How many times an answer naming no question is tried again when the question changed under it. */
export const QUESTION_RETRIES = 3;

/** Thrown by the answer's write when, under the row lock, the operation waits for another question than the one answered. */
export class QuestionChanged extends Error {
  constructor(readonly current: OperationRow) {
    super('the question changed before the answer was written');
    this.name = 'QuestionChanged';
  }
}

/** The question an operation waits on now, by its id; null when it waits on none (or has an answer already). */
export function waitingQuestionId(row: Pick<OperationRow, 'needs_input' | 'input_request' | 'answer'>): string | null {
  if (row.needs_input !== 1 || row.answer) return null;
  const request = parseInputRequest(row);
  return request ? questionIdOf(request) : null;
}

/** 409 `question_superseded`: the answer names a question the operation no longer asks. It changes nothing. */
export function questionSuperseded(row: OperationRow, request: InputRequest, answered: string | undefined): EngineError {
  const current = questionIdOf(request);
  const which = answered !== undefined ? `question ${answered}` : 'the question it was read for';
  return new EngineError(
    'question_superseded',
    `operation ${row.id} no longer asks ${which}: it was asked something else at ${request.requested_at} (question ${current}); read the new question and answer that`,
    409,
    { status: row.status, question: { id: current, message: request.message, ...(request.reason ? { reason: request.reason } : {}), requested_at: request.requested_at } },
  );
}
