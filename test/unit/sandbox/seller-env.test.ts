import { describe, expect, it } from 'vitest';
import { sellerOptionsFromEnv } from '../../../src/sandbox/seller.js';

describe('serve --sandbox seller timings from the environment', () => {
  it('takes whole milliseconds, leaves unset ones to the defaults, and refuses anything else', () => {
    expect(sellerOptionsFromEnv({})).toEqual({});
    expect(sellerOptionsFromEnv({ SANDBOX_SUBMITTED_DELAY_MS: '1500', SANDBOX_WORKING_DELAY_MS: '0' })).toEqual({ submittedDelayMs: 1500, workingDelayMs: 0 });
    expect(sellerOptionsFromEnv({ SANDBOX_WORKING_DELAY_MS: '' })).toEqual({});
    expect(sellerOptionsFromEnv({ SANDBOX_CREATIVE_REVIEW_MS: '250' })).toEqual({ creativeReviewMs: 250 });
    expect(() => sellerOptionsFromEnv({ SANDBOX_CREATIVE_REVIEW_MS: 'quick' })).toThrow(/SANDBOX_CREATIVE_REVIEW_MS must be a whole number of milliseconds/);
    for (const bad of ['-1', '1.5', 'soon', '86400001']) {
      expect(() => sellerOptionsFromEnv({ SANDBOX_WORKING_DELAY_MS: bad })).toThrow(/SANDBOX_WORKING_DELAY_MS must be a whole number of milliseconds/);
    }
  });
});
