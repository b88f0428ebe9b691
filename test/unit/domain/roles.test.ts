import { describe, expect, it } from 'vitest';
import { isRole, keyNameProblem, roleAtLeast, ROLES } from '../../../src/domain/roles.js';

describe('roles', () => {
  it('orders viewer < operator < approver < admin, each including the ones before', () => {
    const allowed = ROLES.map((have) => ROLES.filter((need) => roleAtLeast(have, need)));
    expect(allowed).toEqual([['viewer'], ['viewer', 'operator'], ['viewer', 'operator', 'approver'], ['viewer', 'operator', 'approver', 'admin']]);
  });

  it('grants nothing to a role it does not know', () => {
    for (const unknown of ['superuser', 'ADMIN', '', 'admin ']) {
      expect(isRole(unknown)).toBe(false);
      for (const need of ROLES) expect(roleAtLeast(unknown, need)).toBe(false);
    }
  });

  it('accepts printable one-line names and says what is wrong with others', () => {
    for (const ok of ['alice', 'CI bot', 'ops@example.com', 'x'.repeat(100)]) expect(keyNameProblem(ok)).toBeUndefined();
    expect(keyNameProblem('')).toMatch(/non-empty/);
    expect(keyNameProblem(' alice')).toMatch(/spaces/);
    expect(keyNameProblem('x'.repeat(101))).toMatch(/at most 100/);
    expect(keyNameProblem('alice\nadmin')).toMatch(/control/);
  });
});
