/*
 * The YAML a pricing file needs, and no more, so the package has no YAML dependency:
 *
 *   - block mappings (`key: value`) and block sequences (`- item`), nested by space indentation;
 *     a sequence may sit at its key's indentation (`rules:` then `- path: …`);
 *   - scalars: plain, 'single-quoted' ('' is a quote), "double-quoted" (JSON escapes);
 *     plain `null`/`~`, `true`/`false` and decimal numbers resolve as YAML 1.2's core schema says;
 *   - `#` comments (whole-line, or after whitespace), a leading `---`, empty `[]` and `{}`.
 *
 * Anything else (anchors, aliases, tags, flow collections, multi-line scalars, several documents,
 * tab indentation) is an error naming its line, never a silent misreading.
 */

export class YamlError extends Error {
  override name = 'YamlError';
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
  }
}

interface Line {
  indent: number;
  text: string;
  /** 1-based, for messages. */
  number: number;
}

interface State {
  lines: Line[];
  index: number;
}

export function parseYaml(source: string): unknown {
  const lines = contentLines(source);
  if (lines.length === 0) return null;
  const state: State = { lines, index: 0 };
  const value = parseBlock(state, lines[0].indent);
  const extra = state.lines[state.index];
  if (extra) throw new YamlError('Unexpected indentation', extra.number);
  return value;
}

/** Lines that carry content: blank and comment-only lines dropped, indentation measured. */
function contentLines(source: string): Line[] {
  const lines: Line[] = [];
  source.split(/\r?\n/).forEach((raw, i) => {
    const number = i + 1;
    const text = raw.trimEnd();
    const body = text.trimStart();
    if (body === '' || body.startsWith('#')) return;
    const indentation = text.slice(0, text.length - body.length);
    if (indentation.includes('\t')) throw new YamlError('Indent with spaces, not tabs', number);
    if (body === '---' || body.startsWith('--- ')) {
      if (lines.length > 0) throw new YamlError('Only one document per file is supported', number);
      return;
    }
    lines.push({ indent: indentation.length, text: body, number });
  });
  return lines;
}

function parseBlock(state: State, indent: number): unknown {
  const line = state.lines[state.index];
  if (isSequenceItem(line.text)) return parseSequence(state, indent);
  if (splitKey(line) !== null) return parseMapping(state, indent);
  state.index++;
  return parseScalar(line.text, line.number);
}

function parseSequence(state: State, indent: number): unknown[] {
  const items: unknown[] = [];
  for (
    let line = state.lines[state.index];
    line && line.indent === indent && isSequenceItem(line.text);
    line = state.lines[state.index]
  ) {
    const rest = line.text.slice(1).trimStart();
    if (rest === '') {
      state.index++;
      items.push(parseNested(state, indent));
    } else {
      // `- key: value` starts a mapping (or `- - x` a sequence) whose indentation is where `rest` begins.
      const offset = line.text.length - rest.length;
      state.lines[state.index] = { indent: indent + offset, text: rest, number: line.number };
      items.push(parseBlock(state, indent + offset));
    }
  }
  return items;
}

function parseMapping(state: State, indent: number): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (let line = state.lines[state.index]; line && line.indent === indent; line = state.lines[state.index]) {
    const entry = splitKey(line);
    if (entry === null)
      throw new YamlError(
        isSequenceItem(line.text) ? 'A list item where a key was expected' : 'Expected "key: value"',
        line.number,
      );
    if (Object.hasOwn(map, entry.key)) throw new YamlError(`Duplicate key "${entry.key}"`, line.number);
    state.index++;
    const value = entry.rest === '' ? parseNested(state, indent, true) : parseScalar(entry.rest, line.number);
    // defineProperty: a key named __proto__ must stay data, not replace the prototype.
    Object.defineProperty(map, entry.key, { value, enumerable: true, writable: true, configurable: true });
  }
  return map;
}

/** The value of `key:` or `-` with nothing after it: a deeper block, a same-level list (for keys), or null. */
function parseNested(state: State, indent: number, allowSameLevelList = false): unknown {
  const next = state.lines[state.index];
  if (next && next.indent > indent) return parseBlock(state, next.indent);
  if (allowSameLevelList && next && next.indent === indent && isSequenceItem(next.text))
    return parseSequence(state, indent);
  return null;
}

function isSequenceItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

/** `key: rest` (rest without its comment), or null when the line is not a mapping entry. */
function splitKey(line: Line): { key: string; rest: string } | null {
  const { text, number } = line;
  if (isSequenceItem(text)) return null;
  let key: string;
  let after: string;
  if (text.startsWith('"') || text.startsWith("'")) {
    const quoted = scanQuoted(text, number);
    after = text.slice(quoted.end).trimStart();
    if (!/^:(\s|$)/.test(after)) return null;
    key = quoted.value;
    after = after.slice(1);
  } else {
    const colon = text.search(/:(\s|$)/);
    if (colon <= 0) return null;
    key = text.slice(0, colon).trimEnd();
    if (/\s#/.test(key)) return null;
    after = text.slice(colon + 1);
  }
  const rest = after.trim();
  return { key, rest: rest.startsWith('#') ? '' : rest };
}

function parseScalar(text: string, number: number): unknown {
  if (text.startsWith('"') || text.startsWith("'")) {
    const quoted = scanQuoted(text, number);
    if (!/^(\s+#.*)?\s*$/.test(text.slice(quoted.end)))
      throw new YamlError('Unexpected text after a quoted string', number);
    return quoted.value;
  }
  const comment = text.search(/\s#/);
  const plain = (comment === -1 ? text : text.slice(0, comment)).trimEnd();
  if (plain === '[]') return [];
  if (plain === '{}') return {};
  if (/^[[\]{}&*!|>%@`]/.test(plain))
    throw new YamlError(
      `Unsupported YAML syntax "${plain[0]}" (flow collections, anchors, aliases, tags and block scalars are not supported)`,
      number,
    );
  if (/:(\s|$)/.test(plain)) throw new YamlError('A mapping inside a value on one line is not supported', number);
  return resolvePlain(plain);
}

/** YAML 1.2 core schema, decimal forms only. */
function resolvePlain(plain: string): unknown {
  if (/^(~|null|Null|NULL)$/.test(plain)) return null;
  if (/^(true|True|TRUE)$/.test(plain)) return true;
  if (/^(false|False|FALSE)$/.test(plain)) return false;
  if (/^[-+]?(\.\d+|\d+(\.\d*)?)([eE][-+]?\d+)?$/.test(plain)) return Number(plain);
  return plain;
}

/** A quoted scalar at the start of `text`: its value and the index just past its closing quote. */
function scanQuoted(text: string, number: number): { value: string; end: number } {
  const quote = text[0];
  for (let i = 1; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') {
      i++;
    } else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") {
        i++;
        continue;
      }
      const body = text.slice(0, i + 1);
      return {
        value: quote === "'" ? body.slice(1, -1).replace(/''/g, "'") : decodeDoubleQuoted(body, number),
        end: i + 1,
      };
    }
  }
  throw new YamlError('Unterminated quoted string (multi-line strings are not supported)', number);
}

function decodeDoubleQuoted(body: string, number: number): string {
  try {
    return JSON.parse(body) as string;
  } catch {
    throw new YamlError('Unsupported escape in a double-quoted string (use JSON escapes)', number);
  }
}
