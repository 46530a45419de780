import type { ValidationItem } from '../http/validation-items';

/*
 * Query parameters are read by hand, not through a DTO: the global pipe reports DTO failures at
 * loc ["body", …], and these belong at ["query", name].
 */

export function queryProblem(
  name: string,
  msg: string,
  type: string,
  input: unknown,
  ctx?: Record<string, unknown>,
): ValidationItem {
  return { loc: ['query', name], msg, type, input, ...(ctx ? { ctx } : {}) };
}

/**
 * One parameter's text, or undefined when absent or empty (`?cursor=` asks for the first page).
 * A repeated parameter is a problem rather than a silent pick of one of its values.
 */
export function queryText(name: string, value: unknown, problems: ValidationItem[]): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string') return value;
  problems.push(queryProblem(name, `${name} must be given once, as a single value`, 'string_type', value));
  return undefined;
}
