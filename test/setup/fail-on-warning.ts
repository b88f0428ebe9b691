/**
 * Vitest setup file (vitest.config.ts `setupFiles`): a process warning emitted
 * during a test fails that test, one emitted in a file's `beforeAll`/`afterAll`
 * or between tests fails the file. Node still prints the warning as usual; this
 * only makes sure nobody has to notice it in the output.
 */
import { afterAll, afterEach } from 'vitest';
import { createWarningRecorder, warningFailure } from './warning-recorder.js';

const recorder = createWarningRecorder();
process.on('warning', recorder.record);

/** `process.emitWarning` emits on the next tick: let a warning raised just before the check arrive. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

afterEach(async (context) => {
  await settle();
  const warnings = recorder.take();
  if (warnings.length > 0) throw warningFailure(warnings, `during "${context.task.name}"`);
});

afterAll(async () => {
  await settle();
  // A worker that runs several files loads this once per file: one listener at a time.
  process.off('warning', recorder.record);
  const warnings = recorder.take();
  if (warnings.length > 0) throw warningFailure(warnings, 'outside any test of this file (module load, beforeAll/afterAll)');
});
