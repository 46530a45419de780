/** Deeper bodies are refused: no request of ours nests past a few levels, and recursion is not free. */
export const MAX_JSON_DEPTH = 32;

/** The nesting depth of a parsed JSON value, measured without recursion (so depth itself cannot overflow). */
export function jsonDepthExceeds(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}
