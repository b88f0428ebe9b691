/**
 * A JSON document already serialised, in parts that are sent one after the other and
 * joined only when stored (an Idempotency-Key replay). Used for answers that carry a large
 * stored agent reply: splicing the stored text in spares two more passes (parse, stringify)
 * over megabytes, each a long task of the event loop. Pure.
 */
export class JsonText {
  constructor(readonly parts: string[]) {}

  get text(): string {
    return this.parts.join('');
  }

  get length(): number {
    return this.parts.reduce((n, p) => n + p.length, 0);
  }
}

/** The JSON text of an answer body, whether already serialised or not. */
export function jsonTextOf(body: unknown): string {
  return body instanceof JsonText ? body.text : JSON.stringify(body);
}
