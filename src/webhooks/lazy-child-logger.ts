/**
 * A request's logger made only when the request logs something.
 *
 * Fastify gives every request a child of the app's logger bound to its request id.
 * With our pino (redaction paths, src/logger.ts) each child costs about 12 µs, most of
 * it redacting the bindings; on the webhook routes, whose requests log nothing on the
 * way to their answer (the receiver logs with its own logger, with the operation id),
 * that was the largest single cost of the HTTP layer in the ingest profile
 * (BENCHMARKS.md, Issue 20 — the HTTP layer). This child is made on the first call of
 * any of its methods, with the same bindings and options: a line logged through it is
 * the same line as before, request id included.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

class LazyChildLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly childBindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.childBindings, this.options));
  }

  /** A log call, on the child made now if it was not yet. */
  private forward(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent', args: unknown[]): void {
    const real = this.real();
    (real[level] as (...a: unknown[]) => void).apply(real, args);
  }

  get level(): string {
    return this.real().level;
  }
  set level(level: string) {
    this.real().level = level;
  }
  fatal(...args: unknown[]): void {
    this.forward('fatal', args);
  }
  error(...args: unknown[]): void {
    this.forward('error', args);
  }
  warn(...args: unknown[]): void {
    this.forward('warn', args);
  }
  info(...args: unknown[]): void {
    this.forward('info', args);
  }
  debug(...args: unknown[]): void {
    this.forward('debug', args);
  }
  trace(...args: unknown[]): void {
    this.forward('trace', args);
  }
  silent(...args: unknown[]): void {
    this.forward('silent', args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    const real = this.real() as FastifyBaseLogger & { isLevelEnabled?: (l: string) => boolean };
    return real.isLevelEnabled ? real.isLevelEnabled(level) : true;
  }
  bindings(): Bindings {
    const real = this.real() as FastifyBaseLogger & { bindings?: () => Bindings };
    return real.bindings ? real.bindings() : this.childBindings;
  }
}

/** For `setChildLoggerFactory` on a scope whose requests seldom log. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
