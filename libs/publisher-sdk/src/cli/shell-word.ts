/**
 * `text` as one word a POSIX shell reads back as `text`: as it is when it holds only characters no
 * shell treats specially, else in single quotes. For commands the CLI prints for the user to paste,
 * whose parts (a cursor, an id) come from the API or the user.
 */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_.,:=@%+/-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
