/**
 * Characters a terminal acts on instead of showing, and those that make one text read as another:
 * the controls (C0 but tab and newline: ESC starts the sequences that move the cursor, retitle the
 * window or write the clipboard, CR overwrites a line; DEL; C1, U+009B being an 8-bit ESC [), every
 * format character (the bidirectional embeddings, overrides, isolates and marks, which reorder what
 * surrounds them; zero-width characters and tags, which hide inside a name), every other character
 * shown as nothing (Unicode's default-ignorables: fillers, variation selectors), a surrogate alone,
 * and the line and paragraph separators, which break a line as a newline does.
 */
const TERMINAL_CONTROLS = /(?![\t\n])[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cs}\u2028\u2029]/gu;

/**
 * `text` with those characters written as `\uXXXX` (a pair of them for one beyond the BMP), for text
 * from an API, a site or a model that is printed to a terminal or a log, or shown in a page (the
 * dashboard: an override would reorder what a path reads as). Within JSON text, that is the
 * character's own JSON escape.
 */
export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (c) =>
    Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}
