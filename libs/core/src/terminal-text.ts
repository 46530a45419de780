/**
 * Characters a terminal acts on instead of showing: C0 controls but tab and newline (ESC starts
 * the sequences that move the cursor, retitle the window or write the clipboard; CR overwrites a
 * line), DEL, C1 controls (U+009B is an 8-bit ESC [), and the bidirectional embeddings, overrides
 * and isolates, which reorder what follows them.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with those characters written as `\uXXXX`, for text from an API, a site or a model that
 * is printed to a terminal or a log, or shown in a page (the dashboard: an override would reorder
 * what a path reads as). Within JSON text, that is the character's own JSON escape.
 */
export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
