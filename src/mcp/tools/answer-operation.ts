/** answer_operation: an approver's decision on what an operation waits for (POST /v1/operations/:id/input). */
import { AnswerInput } from '../../api/routes/input.js';
import { presentOperation } from '../../domain/operation-json.js';
import { EngineError } from '../../engine/errors.js';
import { operationSummary } from '../operation-summary.js';
import { changeTool } from '../tool.js';
import { OperationId, OperationOutput } from './schemas.js';

export const answerOperation = changeTool({
  name: 'answer_operation',
  title: 'Answer what an operation waits for',
  description:
    'An approver’s decision on an operation that waits for a person (needs_input): approve (send a held buy, apply governance conditions), reject (with a message saying why; nothing is bought), or respond with corrected params (a new request to the seller). For a rejected creative (input_request.kind creative_rejected), respond with params {creatives: [...]} sends the corrected creatives (a new sync_creatives), and reject dismisses the rejection. Only the decisions in input_request.allowed are taken. Recorded with this key’s name as the person who decided. Answers the operation the decision carries on (a new child operation when respond made one).',
  role: 'approver',
  input: AnswerInput.extend({ id: OperationId }),
  output: OperationOutput,
  async run(ctx, { id, ...answer }) {
    const answers = ctx.services.answers;
    if (!answers) throw new EngineError('answers_not_supported', 'this server takes no answers', 501);
    return presentOperation(await answers.answer(ctx.auth.tenantId, id, answer, ctx.auth.keyName));
  },
  summary: (json, ctx) => operationSummary(json as Parameters<typeof operationSummary>[0], ctx.services.links),
});
