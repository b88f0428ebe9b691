/** What `ops respond` sends (or refuses before sending), and what a change line says. */
import { describe, expect, it } from 'vitest';
import { eventLine, notificationLine } from '../../../src/cli/change-lines.js';
import { UsageError } from '../../../src/cli/cli-errors.js';
import { answerBody } from '../../../src/cli/commands/ops.js';
import { subscriptionBody } from '../../../src/cli/commands/subscriptions.js';

describe('answerBody', () => {
  it('one decision, with the message when given; --params means respond', () => {
    expect(answerBody({ approve: true })).toEqual({ decision: 'approve' });
    expect(answerBody({ reject: true, message: 'too dear' })).toEqual({ decision: 'reject', message: 'too dear' });
    expect(answerBody({ params: '{"budget": 500, "packages": []}', message: 'smaller' })).toEqual({ decision: 'respond', params: { budget: 500, packages: [] }, message: 'smaller' });
  });

  it.each([
    [{}, /give one of/],
    [{ approve: true, reject: true }, /only one of .* \(got --approve, --reject\)/],
    [{ approve: true, params: '{}' }, /only one of .* \(got --approve, --params\)/],
    [{ params: 'nope' }, /not valid JSON/],
    [{ params: '[1]' }, /must be a JSON object/],
    [{ params: 'null' }, /must be a JSON object/],
    [{ params: '"text"' }, /must be a JSON object/],
  ])('%o is a usage error', (o, message) => {
    expect(() => answerBody(o)).toThrow(UsageError);
    expect(() => answerBody(o)).toThrow(message);
  });
});

describe('subscriptionBody', () => {
  it('events split on commas; format checked', () => {
    expect(subscriptionBody('https://h.example/x', { events: 'operation.completed, operation.failed', format: 'slack' })).toEqual({
      url: 'https://h.example/x',
      events: ['operation.completed', 'operation.failed'],
      format: 'slack',
    });
    expect(subscriptionBody('https://h.example/x', { format: 'standard' })).toEqual({ url: 'https://h.example/x', format: 'standard' });
    expect(() => subscriptionBody('u', { format: 'xml' })).toThrow(UsageError);
    expect(() => subscriptionBody('u', { events: ' , ', format: 'standard' })).toThrow(/at least one/);
  });
});

describe('change lines', () => {
  const event = { id: 7, at: '2026-01-01T00:00:00.000Z', source: 'user', kind: 'answered', from: 'input-required', to: 'input-required', actor: 'ana', detail: { decision: 'reject', message: 'over budget' } };

  it('a person’s answer: type, status, source, who, decision and message', () => {
    expect(eventLine('op1', event)).toBe(
      `2026-01-01T00:00:00.000Z  op1  ${'operation.answered'.padEnd(24)} ${'input-required'.padEnd(30)} user by ana  reject  "over budget"\n`,
    );
  });

  it('bookkeeping events keep their kind; a failure shows its error code; JSON text from a seller is left out', () => {
    const resend = { ...event, kind: 'resend', source: 'timer', actor: null, from: 'calling_adcp', to: 'calling_adcp', detail: { attempt: 2 } };
    expect(eventLine('op1', resend)).toMatch(/ resend\s+calling_adcp\s+timer$/m);
    const failed = {
      id: 'ntf_1',
      type: 'operation.failed',
      created_at: '2026-01-01T00:00:00.000Z',
      tenant_id: 't',
      data: {
        operation: { id: 'op2', status: 'failed', needs_input: false, error: { code: 'INVALID_REQUEST', message: 'bad' } },
        event: { ...event, kind: 'transition', source: 'webhook', actor: null, from: 'submitted', to: 'failed', detail: { message: '{"errors":[]}' } },
      },
    };
    expect(notificationLine(failed)).toMatch(/op2  operation\.failed\s+submitted -> failed\s+webhook  INVALID_REQUEST\n$/);
  });
});

describe('a campaign notification line', () => {
  it('names the campaign, how its buys ended and what was committed (there is no operation in it)', () => {
    const line = notificationLine({
      id: 'ntf_1',
      type: 'campaign.completed',
      created_at: '2026-05-04T10:12:01.118Z',
      tenant_id: 't',
      data: { campaign: { id: 'cmp_1', status: 'done', summary: { done: 3, denied: 1, failed: 0 }, budget: { committed: 15000 } } },
    });
    expect(line).toBe(`2026-05-04T10:12:01.118Z  cmp_1  ${'campaign.completed'.padEnd(24)} ${'done'.padEnd(30)} campaign  done=3 denied=1  committed=15000\n`);
  });
});

describe('a media buy notification line', () => {
  it('names the buy, the change, its spend and pacing (there is no operation in it)', () => {
    const line = notificationLine({
      id: 'ntf_2',
      type: 'media_buy.underpacing',
      created_at: '2026-05-04T10:12:01.118Z',
      tenant_id: 't',
      data: {
        media_buy: { id: 'buy_1', media_buy_id: 'mb_9', status: 'active', delivery: { spend: 120.5, pacing: { state: 'under' } } },
        event: { id: 3, at: '2026-05-04T10:12:01.000Z', source: 'webhook', kind: 'pacing_alert', from: null, to: null, detail: { state: 'under' }, actor: null },
      },
    });
    expect(line).toBe(`2026-05-04T10:12:01.000Z  buy_1  ${'media_buy.underpacing'.padEnd(24)} ${''.padEnd(30)} webhook  media_buy_id=mb_9  spend=120.5  pacing=under\n`);
  });
});
