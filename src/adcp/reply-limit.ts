/**
 * The cap on the size of one reply from an agent (ADCP_ORCH_MAX_REPLY_BYTES).
 *
 * Why a cap at all: whatever an agent answers is parsed, stored and shown, and one
 * reply of many megabytes blocked this process for seconds (other sellers' calls timed
 * out meanwhile). A reply is counted while it is read, so one past the cap is never
 * buffered whole: reading stops there and the connection is closed.
 *
 * Why 4 MiB by default: a `get_products` answer is the largest an agent normally
 * sends. A product with its formats, pricing options and reporting capabilities is
 * 1–10 KiB of JSON, so 4 MiB holds hundreds to thousands of products, far more than a
 * brief asks for, and AdCP lets a seller with a larger catalogue page it
 * (`pagination`). A buyer that knows its sellers answer more can raise it.
 */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;

/** A reply grew past the cap; reading it stopped there. */
export class ReplyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the agent's reply is larger than ${limitBytes} bytes (ADCP_ORCH_MAX_REPLY_BYTES); reading it stopped there`);
    this.name = 'ReplyTooLargeError';
  }
}

export interface CountedBodyHooks {
  /** Bytes allowed; undefined: no cap. */
  limit?: number;
  /** Each chunk's size, as it is read. */
  onChunk?(bytes: number): void;
  /** The body was read to its end, cancelled or errored (called once). */
  onEnd(): void;
  /** The body passed `limit`: the caller closes the connection. Called before the stream errors. */
  onTooLarge(err: ReplyTooLargeError): void;
}

/** `source` passed through chunk by chunk, counted against the cap. */
export function countedBody(source: ReadableStream<Uint8Array>, hooks: CountedBodyHooks): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let seen = 0;
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      hooks.onEnd();
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          end();
          controller.close();
          return;
        }
        seen += chunk.value.byteLength;
        hooks.onChunk?.(chunk.value.byteLength);
        if (hooks.limit !== undefined && seen > hooks.limit) {
          const err = new ReplyTooLargeError(hooks.limit);
          hooks.onTooLarge(err);
          end();
          controller.error(err);
          reader.cancel(err).catch(() => {});
          return;
        }
        controller.enqueue(chunk.value);
      } catch (err) {
        end();
        controller.error(err);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

/**
 * At most `maxBytes` of a body as text, the rest left unread and the body cancelled:
 * for error replies, which are read only to be shown.
 */
export async function readTextUpTo(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}
