/** The opaque page cursor of the list routes: the (created_at, id) of the last row of a page, keyset order. */
import { ApiError } from './errors.js';

export interface Cursor {
  createdAt: number;
  id: string;
}

export const encodeCursor = (c: Cursor): string => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');

export function decodeCursor(s: string): Cursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    /* fall through */
  }
  throw new ApiError(400, 'invalid_cursor', 'cursor is not one this API returned');
}
