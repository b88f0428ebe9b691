/**
 * How a command fails: bad usage is exit code 2 with `error: <message>`, before
 * anything is sent; an error the API answered is exit code 1 with
 * `error: <code>: <message>`; anything else (the server cannot be reached) is
 * exit code 1 with its message. Never a stack trace: a person reads this.
 */
export class UsageError extends Error {}

/** An answer of the API other than 2xx: its error code and message as the API gave them. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** The server could not be reached (or the connection broke before an answer). */
export class UnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`cannot reach ${url}: ${describeNetworkError(cause)}`);
  }
}

function describeNetworkError(err: unknown): string {
  // fetch hides the socket's error (ECONNREFUSED, ENOTFOUND…) in `cause`.
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

export function exitCodeFor(err: unknown): number {
  return err instanceof UsageError ? 2 : 1;
}

export function errorLine(err: unknown): string {
  if (err instanceof ApiError) return `error: ${err.code}: ${err.message}\n`;
  return `error: ${err instanceof Error ? err.message : String(err)}\n`;
}

/** Exits once standard output and standard error have taken what was written (a pipe may still hold it). */
export function exitAfterFlush(code: number): Promise<never> {
  return new Promise(() => {
    process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  });
}
