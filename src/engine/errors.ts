/** Errors the engine raises for the API layer to turn into 4xx answers. */
export class EngineError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus: number,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

export const notFound = (what: string, id: string) => new EngineError('not_found', `${what} ${id} not found`, 404);
