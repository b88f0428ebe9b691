/**
 * GET /inbox and POST /operations/:id/input. An answer from a form goes through the
 * same engine call and rules as POST /v1/operations/:id/input (the AnswerService):
 * the same role (approver), the same checks, the same event with the key's name.
 */
import type { FastifyInstance } from 'fastify';
import { AnswerInput } from '../../api/routes/input.js';
import type { Answer } from '../../domain/input-request.js';
import { roleAtLeast } from '../../domain/roles.js';
import { EngineError } from '../../engine/errors.js';
import { DashboardReads } from '../../store/dashboard-reads.js';
import type { UiDeps } from '../deps.js';
import { isFragmentRequest, liveUrl, noticeFrom, sendFragment, sendHtml, sendPage } from '../page.js';
import { requireCsrf, requireSession, requireUiRole } from '../session.js';
import { inboxPage, inboxRegion, type InboxView } from '../views/inbox.js';
import { messagePage } from '../views/message.js';

const INBOX_LIMIT = 100;

type Form = Record<string, unknown>;

/**
 * The form's fields as the API's body, checked by the API's own schema
 * (POST /v1/operations/:id/input): {decision, message?, params?, question_id?}. A problem is said in words.
 */
function answerFrom(form: Form): Answer | string {
  let params: unknown;
  if (typeof form.params === 'string' && form.params.trim() !== '') {
    try {
      params = JSON.parse(form.params);
    } catch (err) {
      return `The parameters are not valid JSON: ${(err as Error).message}.`;
    }
    if (!params || typeof params !== 'object' || Array.isArray(params)) return 'The parameters must be a JSON object, such as {"packages": [...]}.';
  }
  const message = typeof form.message === 'string' && form.message.trim() !== '' ? form.message : undefined;
  // The form names the question it was shown with, so an answer never lands on a question asked since.
  const questionId = typeof form.question_id === 'string' && form.question_id !== '' ? form.question_id : undefined;
  const parsed = AnswerInput.safeParse({
    decision: form.decision,
    ...(message !== undefined ? { message } : {}),
    ...(params !== undefined ? { params } : {}),
    ...(questionId !== undefined ? { question_id: questionId } : {}),
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.path[0] === 'decision') return 'Choose approve, reject or respond.';
  return `The ${String(issue.path[0] ?? 'answer')} was not accepted: ${issue.message}.`;
}

export function inboxPages(app: FastifyInstance, deps: UiDeps): void {
  const reads = new DashboardReads(deps.store.db);
  const session = requireSession(deps.store, () => deps.clock.now());

  app.get('/inbox', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const live = isFragmentRequest(req) ? '' : await liveUrl(req, deps);
    const rows = await reads.waiting(auth.tenantId, INBOX_LIMIT + 1);
    const view: InboxView = {
      rows: rows.slice(0, INBOX_LIMIT),
      more: rows.length > INBOX_LIMIT,
      agents: await deps.store.agents.list(auth.tenantId),
      now: deps.clock.now(),
      forms: { csrf: req.uiSession!.csrf, canAnswer: roleAtLeast(auth.role, 'approver'), answersEnabled: Boolean(deps.answers), role: auth.role },
      notice: noticeFrom(req),
    };
    if (isFragmentRequest(req)) return sendFragment(req, reply, reads, inboxRegion(view));
    return sendPage(req, reply, deps, reads, { title: 'Inbox', section: 'inbox', live, body: inboxPage(view) });
  });

  const answers = deps.answers;
  if (!answers) return;
  app.post('/operations/:id/input', { preHandler: [session, requireCsrf(), requireUiRole('approver')] }, async (req, reply) => {
    const auth = req.auth!;
    const { id } = req.params as { id: string };
    const form = (req.body ?? {}) as Form;
    const back = form.return_to === 'inbox' ? '/inbox' : `/operations/${encodeURIComponent(id)}`;
    const refused = (status: number, message: string) =>
      sendHtml(reply, messagePage({ title: 'Answer not taken', message, link: { href: back, text: form.return_to === 'inbox' ? 'Back to the inbox' : 'Back to the operation' } }), status);
    const answer = answerFrom(form);
    if (typeof answer === 'string') return refused(400, answer);
    try {
      const carried = await answers.answer(auth.tenantId, id, answer, auth.keyName);
      const to = form.return_to === 'inbox' ? '/inbox?notice=answered' : `/operations/${encodeURIComponent(carried.id)}?notice=answered`;
      return reply.code(303).header('location', to).send();
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      if (err.code === 'question_superseded') return refused(409, 'The seller has asked something else since this page was shown, so your answer was not taken. Read the new question and answer that.');
      return refused(err.httpStatus, err.message);
    }
  });
}
