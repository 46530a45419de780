import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '@crawlgate/core';
import { applyDecorators } from '@nestjs/common';
import { ApiQuery, ApiResponse } from '@nestjs/swagger';
import { ValidationFailed, type ValidationItem } from '../http/validation-items';
import { decodeCursor, type Cursor } from './cursor';
import { queryProblem, queryText } from './query-params';

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE };

/** A page of a newest-first list: at most `limit` items, all strictly older than `after`. */
export interface PageRequest {
  limit: number;
  after: Cursor | null;
}

/** Reads `?limit=&cursor=`; every problem is reported at once as a 422. */
export function parsePageRequest(query: { limit?: unknown; cursor?: unknown }): PageRequest {
  const problems: ValidationItem[] = [];
  const limit = readLimit(queryText('limit', query.limit, problems), problems);
  const after = readCursor(queryText('cursor', query.cursor, problems), problems);
  if (problems.length > 0) throw new ValidationFailed(problems);
  return { limit, after };
}

function readLimit(text: string | undefined, problems: ValidationItem[]): number {
  if (text === undefined) return DEFAULT_PAGE_SIZE;
  const range = `an integer from 1 to ${MAX_PAGE_SIZE}`;
  if (!/^\d{1,6}$/.test(text)) {
    problems.push(queryProblem('limit', `limit must be ${range}`, 'int_parsing', text));
    return DEFAULT_PAGE_SIZE;
  }
  const limit = Number(text);
  if (limit < 1) problems.push(queryProblem('limit', `limit must be ${range}`, 'greater_than_equal', text, { ge: 1 }));
  if (limit > MAX_PAGE_SIZE)
    problems.push(queryProblem('limit', `limit must be ${range}`, 'less_than_equal', text, { le: MAX_PAGE_SIZE }));
  return limit;
}

function readCursor(text: string | undefined, problems: ValidationItem[]): Cursor | null {
  if (text === undefined) return null;
  const cursor = decodeCursor(text);
  if (!cursor)
    problems.push(
      queryProblem('cursor', 'cursor must be a next_cursor returned by this list, passed as is', 'cursor_format', text),
    );
  return cursor;
}

/** The OpenAPI description of `?limit=&cursor=`, for every paginated route. */
export const ApiPageQueries = () =>
  applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      schema: { type: 'string' },
      description: 'next_cursor of the previous page; omit for the newest page.',
    }),
    ApiResponse({
      status: 422,
      description: 'Bad limit or cursor: `detail` is a list of {loc, msg, type, input?, ctx?}',
    }),
  );
