import { base64urlDecode, base64urlEncode, utf8Decode, utf8Encode } from '@crawlgate/core';
import { isUuid } from '../http/ids';

/**
 * Where a page of payments stops: the sort key of its last item. Pages go newest first by
 * (paid at, id); the id breaks ties between payments confirmed in the same millisecond.
 */
export interface Cursor {
  at: Date;
  id: string;
}

/*
 * Opaque to clients (base64url), but only an encoding, not a secret: a forged cursor can only
 * move a caller within lists it may read anyway.
 */
const TEXT = /^(\d{1,15}):([0-9a-f-]{36})$/;

export function encodeCursor(cursor: Cursor): string {
  return base64urlEncode(utf8Encode(`${cursor.at.getTime()}:${cursor.id}`));
}

/** Null for anything encodeCursor did not write. */
export function decodeCursor(text: string): Cursor | null {
  const bytes = base64urlDecode(text);
  const match = bytes && TEXT.exec(utf8Decode(bytes) ?? '');
  if (!match || !isUuid(match[2])) return null;
  const at = new Date(Number(match[1]));
  return Number.isNaN(at.getTime()) ? null : { at, id: match[2] };
}
