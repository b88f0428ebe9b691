/**
 * One piece of work that several calls wait on (an MCP session's handshake, an A2A
 * agent card), run under a signal of its own.
 *
 * Why: run under the signal of the call that happened to start it, the work would
 * fail for everyone when that one call was given up on; run under no signal, a
 * seller dripping its answer would keep the connection open after every caller had
 * left. Here each caller waits only as long as its own signal allows, and the
 * work is aborted (its connection closed) once every caller has left before it
 * ended. Once it has ended, its signal never fires.
 */
export class SharedAttempt<T> {
  private readonly controller = new AbortController();
  private waiting = 0;
  private settled = false;
  /** Set once the work has succeeded: later joins take it as it is (a poll joins its agent's session twice). */
  private fulfilled: { value: T } | undefined;
  readonly promise: Promise<T>;

  constructor(run: (signal: AbortSignal) => Promise<T>) {
    this.promise = run(this.controller.signal);
    this.promise.then(
      (value) => {
        this.settled = true;
        this.fulfilled = { value };
      },
      () => (this.settled = true),
    );
  }

  /** The work's outcome, or `signal`'s reason if it fires first. */
  join(signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(signal.reason);
    // Ended well: nothing left to wait for, so no listener on the caller's signal and no promise of our own.
    if (this.fulfilled) return this.promise;
    this.waiting++;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = () => {
        if (left) return false;
        left = true;
        this.waiting--;
        signal.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = () => {
        if (!leave()) return;
        if (!this.settled && this.waiting === 0) this.controller.abort(signal.reason);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.promise.then(
        (value) => leave() && resolve(value),
        (err) => leave() && reject(err),
      );
    });
  }
}
