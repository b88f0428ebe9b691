/**
 * The suite's setup file fails a test that emits a process warning. Proven by
 * running vitest itself, in a child process, with the project's config on the
 * fixture files in test/fixtures/warnings/ and reading its JSON report.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import project from '../../../vitest.config.js';
import { ALLOWED_WARNINGS, createWarningRecorder, warningFailure } from '../../setup/warning-recorder.js';

interface Report {
  testResults: Array<{ name: string; status: string; message: string; assertionResults: Array<{ title: string; status: string; failureMessages: string[] }> }>;
}

const root = new URL('../../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'warnings-fixture-'));
let report: Report;
let exitCode: number | null = 0;

beforeAll(async () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
  const outputFile = join(dir, 'report.json');
  try {
    await promisify(execFile)(
      process.execPath,
      [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/fixtures/warnings/vitest.config.ts', '--reporter=json', `--outputFile=${outputFile}`],
      { cwd: root, env, timeout: 120_000 },
    );
  } catch (err) {
    exitCode = (err as { code?: number }).code ?? null;
  }
  report = JSON.parse(readFileSync(outputFile, 'utf8')) as Report;
}, 150_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const testsOf = (file: string) => report.testResults.find((f) => f.name.endsWith(file))!;
const outcome = (title: string) => testsOf('warnings.fixture.ts').assertionResults.find((t) => t.title === title)!;

describe('a process warning fails the test', () => {
  it('is wired into the project config', () => {
    expect(project.test?.setupFiles).toContain('test/setup/fail-on-warning.ts');
  });

  it('the run fails', () => {
    expect(exitCode).toBe(1);
  });

  it('fails each test that emitted a warning, naming it with its stack', () => {
    const custom = outcome('emits a custom warning');
    expect(custom.status).toBe('failed');
    expect(custom.failureMessages[0]).toMatch(/FixtureWarning \[FIXTURE_001\]: something is off/);
    expect(custom.failureMessages[0]).toMatch(/warnings\.fixture\.ts:\d+/);
    expect(outcome('leaks listeners on an emitter').failureMessages[0]).toMatch(/MaxListenersExceededWarning.*EventEmitter/);
    expect(outcome('leaks abort listeners on a long-lived signal, as the MCP transport did').failureMessages[0]).toMatch(
      /MaxListenersExceededWarning.*abort listeners added to \[AbortSignal\]/,
    );
  });

  it('passes the tests that emitted none, before and after', () => {
    expect(outcome('stays clean').status).toBe('passed');
    expect(outcome('stays clean after warnings in the tests before it').status).toBe('passed');
  });

  it('fails the file for a warning emitted outside any test', () => {
    const file = testsOf('module-load.fixture.ts');
    expect(file.status).toBe('failed');
    expect(file.message + JSON.stringify(file.assertionResults)).toMatch(/FixtureWarning \[FIXTURE_LOAD\]: emitted at import time/);
  });
});

describe('the recorder', () => {
  it('hands each warning over once', () => {
    const recorder = createWarningRecorder();
    recorder.record(Object.assign(new Error('x'), { name: 'SomeWarning' }));
    expect(recorder.take().map((w) => w.name)).toEqual(['SomeWarning']);
    expect(recorder.take()).toEqual([]);
    expect(warningFailure([new Error('y')], 'here').message).toMatch(/1 process warning\(s\) here/);
  });

  it('allows nothing through today (an entry needs a reason)', () => {
    expect(ALLOWED_WARNINGS).toEqual([]);
  });
});
