import { CliError } from './errors';

/**
 * Reads a line from a TTY without echoing it: raw mode, so keystrokes reach us instead of the
 * terminal's line editor. Backspace edits, Enter ends, Ctrl-C cancels.
 */
export function promptHidden(
  question: string,
  input: NodeJS.ReadStream,
  write: (text: string) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed: string[] = [];
    const finish = () => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.setRawMode(false);
      input.pause();
      write('\n');
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          finish();
          resolve(typed.join(''));
          return;
        }
        if (char === '\u0003') {
          finish();
          reject(new CliError('Cancelled'));
          return;
        }
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed.push(char);
      }
    };
    // An input that ends without Enter or Ctrl-D (a closed pipe) would leave the promise, and the command, unsettled.
    const onEnd = () => {
      finish();
      reject(new CliError('Cancelled: the input ended'));
    };
    write(question);
    input.setRawMode(true);
    input.resume();
    input.on('data', onData);
    input.once('end', onEnd);
  });
}
