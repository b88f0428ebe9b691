/**
 * The opaque `next_cursor` of the engine's listings (operations, media buys): the
 * (created_at, id) of a page's last row, for keyset paging newest first. A cursor
 * this API did not return is refused with `invalid_cursor`.
 */
import { EngineError } from './errors.js';

export interface PageCursor {
  createdAt: number;
  id: string;
}

export const encodeCursor = (c: PageCursor): string => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');

export function decodeCursor(s: string): PageCursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    /* fall through */
  }
  throw new EngineError('invalid_cursor', 'cursor is not one this API returned', 400);
}
