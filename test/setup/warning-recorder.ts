/**
 * Records the process warnings emitted while a test runs, so the test can be
 * failed for them (see fail-on-warning.ts). A warning is a defect caught where
 * it is born: a listener leak, a deprecated call, an unhandled edge of a
 * library — each is one a long-running service would print over and over.
 */

/**
 * Warnings allowed through, each with the reason it cannot be avoided. Keep
 * this tiny: a new entry needs the same justification as a skipped test.
 * (Empty: nothing the suite runs emits an unavoidable warning today.)
 */
export const ALLOWED_WARNINGS: ReadonlyArray<{ name: string; message: RegExp; why: string }> = [];

export interface WarningRecorder {
  /** The `process.on('warning')` listener. */
  readonly record: (warning: Error) => void;
  /** The warnings recorded since the last call, and forget them. */
  take(): Error[];
}

export function isAllowed(warning: Error): boolean {
  return ALLOWED_WARNINGS.some((a) => a.name === warning.name && a.message.test(warning.message));
}

export function createWarningRecorder(): WarningRecorder {
  let seen: Error[] = [];
  return {
    record: (warning) => {
      if (!isAllowed(warning)) seen.push(warning);
    },
    take: () => {
      const taken = seen;
      seen = [];
      return taken;
    },
  };
}

/** The failure for the recorded warnings: each one's name, code, message and stack. */
export function warningFailure(warnings: Error[], where: string): Error {
  const lines = warnings.map((w) => {
    const code = (w as { code?: unknown }).code;
    return `${w.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${w.message}\n${(w.stack ?? '').split('\n').slice(1).join('\n')}`;
  });
  const error = new Error(`${warnings.length} process warning(s) ${where} (a warning fails the test; fix its cause):\n${lines.join('\n\n')}`);
  error.name = 'ProcessWarningError';
  return error;
}
