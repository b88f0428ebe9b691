/**
 * How an answer is written on the operation it answers (docs/ARCHITECTURE.md, People in
 * the loop): the columns of an operation that no longer waits, and the `answered` event
 * with the person's name. Shared by every kind of answer (answer-service.ts, and a
 * creative rejection's in media-buys/creative-answers.ts).
 */
import { redactedCredentials } from '../domain/credential-fields.js';
import type { RecordedAnswer } from '../domain/input-request.js';
import type { NewEvent, OperationPatch, OperationRow } from '../store/operations-repo.js';

/** The columns of an answered operation that no longer waits. */
export function answered(recorded: RecordedAnswer): OperationPatch {
  return { needs_input: 0, input_request: null, input_message: null, answer: JSON.stringify(recorded), stalled: 0, stalled_reason: null };
}

/** The event that records an answer: who, what, when (the person's params with credentials redacted). */
export function answeredEvent(current: OperationRow, recorded: RecordedAnswer): NewEvent {
  return {
    source: 'user',
    kind: 'answered',
    from: current.status,
    to: current.status,
    actor: recorded.actor,
    detail: {
      kind: recorded.kind,
      decision: recorded.decision,
      ...(recorded.message !== undefined ? { message: recorded.message } : {}),
      ...(recorded.params !== undefined ? { params: redactedCredentials(recorded.params) } : {}),
      ...(recorded.question_id !== undefined ? { question_id: recorded.question_id } : {}),
    },
  };
}
