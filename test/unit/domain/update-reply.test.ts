/** What a completed update_media_buy says of its buy (src/domain/update-reply.ts). */
import { describe, expect, it } from 'vitest';
import { readUpdateReply } from '../../../src/domain/update-reply.js';

const pause = { media_buy_id: 'mb_1', paused: true };
const resume = { media_buy_id: 'mb_1', paused: false };

describe('the buy status an update reply states', () => {
  it('is media_buy_status (3.1+) first, never the task status beside it', () => {
    expect(readUpdateReply(resume, { status: 'completed', media_buy_status: 'active', media_buy_id: 'mb_1' })).toMatchObject({ status: 'active', stated: true });
    expect(readUpdateReply(pause, { status: 'completed', media_buy_status: 'paused' })).toMatchObject({ status: 'paused', stated: true });
    // A media_buy_status that is no buy status says nothing, and the root `status` beside it is the task's.
    expect(readUpdateReply(resume, { status: 'active', media_buy_status: 'running' })).toEqual({ stated: false, resumed: true });
  });

  it('else the root status (3.0) when it is a buy status, except `completed`, which is also the task status word', () => {
    expect(readUpdateReply(pause, { media_buy_id: 'mb_1', status: 'paused', revision: 4 })).toMatchObject({ status: 'paused', stated: true, revision: 4 });
    expect(readUpdateReply({ media_buy_id: 'mb_1', canceled: true }, { media_buy_id: 'mb_1', status: 'canceled' })).toMatchObject({ status: 'canceled', stated: true });
    expect(readUpdateReply(pause, { media_buy_id: 'mb_1', status: 'completed' })).toMatchObject({ status: 'paused', stated: false });
    expect(readUpdateReply(pause, { media_buy_id: 'mb_1', status: 'working' })).toMatchObject({ status: 'paused', stated: false });
  });
});

describe('a reply that states no status', () => {
  it('is read from the request: a pause pauses, a cancel cancels, a resume is a resume whose status the caller finds', () => {
    expect(readUpdateReply(pause, { media_buy_id: 'mb_1' })).toEqual({ status: 'paused', stated: false, resumed: false });
    expect(readUpdateReply({ canceled: true }, { media_buy_id: 'mb_1' })).toEqual({ status: 'canceled', stated: false, resumed: false });
    expect(readUpdateReply(resume, { media_buy_id: 'mb_1' })).toEqual({ stated: false, resumed: true });
    // An update that neither pauses, resumes nor cancels implies nothing.
    expect(readUpdateReply({ reporting_webhook: {} }, { media_buy_id: 'mb_1' })).toEqual({ stated: false, resumed: false });
  });

  it('keeps what else it says: revision, valid actions, the packages it changed', () => {
    const facts = readUpdateReply(pause, { media_buy_id: 'mb_1', revision: 7, valid_actions: ['resume', 3], affected_packages: [{ package_id: 'p1', paused: true }] });
    expect(facts).toMatchObject({ revision: 7, valid_actions: ['resume'], packages: [{ package_id: 'p1', paused: true }] });
    expect(readUpdateReply(pause, { revision: 1.5 }).revision).toBeUndefined();
  });
});
