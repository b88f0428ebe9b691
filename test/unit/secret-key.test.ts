import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveSecretKey } from '../../src/secret-key.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'orch-key-'));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the generated secret key', () => {
  it('is created once beside the database, readable by its owner only, in a directory of its own made 0700', () => {
    const dir = join(tempDir(), 'data');
    const first = resolveSecretKey(undefined, `sqlite:${join(dir, 'orchestrator.db')}`);
    expect(first.source).toBe(join(dir, 'secret.key'));
    expect(first.key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(first.source).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(resolveSecretKey(undefined, `sqlite:${join(dir, 'orchestrator.db')}`).key).toBe(first.key);
    // Nothing left behind from writing it.
    expect(readdirSync(dir)).toEqual(['secret.key']);
  });

  it('is narrowed back to 0600 when found readable by others', () => {
    const dir = tempDir();
    const file = join(dir, 'secret.key');
    writeFileSync(file, 'an-operator-provided-key-0123456789\n');
    chmodSync(file, 0o644);
    expect(resolveSecretKey(undefined, `sqlite:${join(dir, 'x.db')}`).key).toBe('an-operator-provided-key-0123456789');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe('an-operator-provided-key-0123456789\n');
  });

  it('is not generated when ADCP_ORCH_SECRET_KEY is set, and is required with PostgreSQL', () => {
    const dir = tempDir();
    expect(resolveSecretKey('configured-key-0123456789', `sqlite:${join(dir, 'x.db')}`)).toEqual({ key: 'configured-key-0123456789', source: 'ADCP_ORCH_SECRET_KEY' });
    expect(readdirSync(dir)).toEqual([]);
    expect(() => resolveSecretKey(undefined, 'postgres://127.0.0.1/x')).toThrow(/required with PostgreSQL/);
  });
});
