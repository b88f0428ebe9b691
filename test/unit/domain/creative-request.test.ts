/** What a sync_creatives for a buy must hold, a person's correction, and the question a rejection asks. */
import { describe, expect, it } from 'vitest';
import { checkSyncInput, correctionInput, creativeRejectedRequest, isSyncProblem } from '../../../src/domain/creative-request.js';
import { checkAnswer } from '../../../src/domain/input-request.js';

const c = (id: unknown, name: unknown = 'Banner') => ({ creative_id: id, name, format_id: { agent_url: 'https://s.example', id: 'f' }, assets: {} });
const code = (v: ReturnType<typeof checkSyncInput>) => (isSyncProblem(v) ? v.code : 'ok');

describe('checkSyncInput', () => {
  it('takes creatives that name themselves, and assignments to this buy’s packages', () => {
    const ok = checkSyncInput({ creatives: [c('a'), c('b')], assignments: [{ creative_id: 'a', package_id: 'p1', weight: 50 }] }, ['p1', 'p2']);
    expect(ok).toEqual({ creatives: [c('a'), c('b')], assignments: [{ creative_id: 'a', package_id: 'p1', weight: 50 }] });
  });

  it('refuses what would be sent wrong, naming what and where', () => {
    expect(code(checkSyncInput({ creatives: [] }, []))).toBe('creatives_required');
    expect(code(checkSyncInput({ creatives: [c(undefined)] }, []))).toBe('creative_id_required');
    expect(code(checkSyncInput({ creatives: [c('  ')] }, []))).toBe('creative_id_required');
    expect(code(checkSyncInput({ creatives: [c('a'), c('a')] }, []))).toBe('duplicate_creative_id');
    expect(code(checkSyncInput({ creatives: [c('a', '')] }, []))).toBe('creative_name_required');
    expect(code(checkSyncInput({ creatives: Array.from({ length: 101 }, (_, i) => c(`c${i}`)) }, []))).toBe('too_many_creatives');
    expect(code(checkSyncInput({ creatives: [c('a')], assignments: [{ creative_id: 'z', package_id: 'p1' }] }, ['p1']))).toBe('unknown_creative');
    const other = checkSyncInput({ creatives: [c('a')], assignments: [{ creative_id: 'a', package_id: 'pkg_of_another_buy' }] }, ['p1']);
    expect(other).toMatchObject({ status: 400, code: 'unknown_package', details: { package_id: 'pkg_of_another_buy', packages: ['p1'] } });
    expect(code(checkSyncInput({ creatives: [c('a')], assignments: [{ creative_id: 'a', package_id: 'p1' }, { creative_id: 'a', package_id: 'p1' }] }, ['p1']))).toBe('duplicate_assignment');
    expect(code(checkSyncInput({ creatives: [c('a')], assignments: [{ creative_id: 'a', package_id: 'p1', weight: 101 }] }, ['p1']))).toBe('invalid_assignments');
    expect(code(checkSyncInput({ creatives: [c('a')], assignments: [{ creative_id: 'a', package_id: 'p1', budget: 5 }] }, ['p1']))).toBe('invalid_assignments');
  });
});

describe('a correction', () => {
  it('goes to the packages the rejected creative had, unless the person assigns it', () => {
    const earlier = new Map([['a', ['p1', 'p2']]]);
    expect(correctionInput({ creatives: [c('a')] }, earlier)).toEqual({ creatives: [c('a')], assignments: [{ creative_id: 'a', package_id: 'p1' }, { creative_id: 'a', package_id: 'p2' }] });
    expect(correctionInput({ creatives: [c('a')], assignments: [{ creative_id: 'a', package_id: 'p2' }] }, earlier)).toEqual({ creatives: [c('a')], assignments: [{ creative_id: 'a', package_id: 'p2' }] });
    expect(correctionInput({ creatives: [c('new')] }, earlier)).toEqual({ creatives: [c('new')] });
    expect(correctionInput({ creatives: [c('a')], account: { account_id: 'x' } }, earlier)).toMatchObject({ code: 'unsupported_params' });
  });

  it('the question names each creative and reason, and is answered by respond or reject (dismiss, no message needed)', () => {
    const one = creativeRejectedRequest([{ creative_id: 'a', name: 'Banner', rejection_reason: 'too loud', package_ids: ['p1'] }], { id: 'buy_1', media_buy_id: 'mb_1' }, 0);
    expect(one).toMatchObject({ kind: 'creative_rejected', creative_id: 'a', rejection_reason: 'too loud', allowed: ['respond', 'reject'], media_buy: { id: 'buy_1' } });
    expect(one.message).toContain('"Banner" (a): too loud');
    const two = creativeRejectedRequest(
      [
        { creative_id: 'a', name: null, rejection_reason: 'x', package_ids: [] },
        { creative_id: 'b', name: 'B', rejection_reason: 'y', package_ids: [] },
      ],
      { id: 'buy_1', media_buy_id: 'mb_1' },
      0,
    );
    expect(two.message).toContain('rejected 2 creatives');
    expect(two.id).not.toBe(one.id);
    expect(checkAnswer(one, { decision: 'reject' })).toBeNull();
    expect(checkAnswer(one, { decision: 'approve' })).toMatchObject({ status: 409, code: 'decision_not_allowed' });
    expect(checkAnswer(one, { decision: 'respond' })).toMatchObject({ status: 400, code: 'params_required' });
  });
});
