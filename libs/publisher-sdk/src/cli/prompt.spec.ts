import { PassThrough } from 'node:stream';
import { promptHidden } from './prompt';

/** A stand-in for a terminal's stdin: raw mode is recorded, keystrokes are written by the test. */
function fakeTty() {
  const modes: boolean[] = [];
  const stream = Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode: (mode: boolean) => modes.push(mode),
  }) as unknown as NodeJS.ReadStream & PassThrough;
  return { stream, modes };
}

describe('promptHidden', () => {
  it('reads a line in raw mode without echoing it; backspace edits', async () => {
    const { stream, modes } = fakeTty();
    let shown = '';
    const answer = promptHidden('Password: ', stream, (text) => void (shown += text));
    stream.write('hunter');
    stream.write('3\u007f2 é\r');
    await expect(answer).resolves.toBe('hunter2 é');
    expect(shown).toBe('Password: \n');
    expect(modes).toEqual([true, false]);
    expect(stream.listenerCount('data')).toBe(0);
  });

  it('Ctrl-C cancels and restores the terminal', async () => {
    const { stream, modes } = fakeTty();
    const answer = promptHidden('Password: ', stream, () => undefined);
    stream.write('abc\u0003');
    await expect(answer).rejects.toThrow('Cancelled');
    expect(modes).toEqual([true, false]);
  });

  it('an input that ends unanswered cancels, and restores the terminal', async () => {
    const { stream, modes } = fakeTty();
    const answer = promptHidden('Password: ', stream, () => undefined);
    stream.end('abc');
    const settled = await Promise.race([answer.catch((error: Error) => error), delay(2_000, 'unsettled')]);
    expect(settled).toMatchObject({ message: 'Cancelled: the input ended' });
    expect(modes).toEqual([true, false]);
    expect(stream.listenerCount('data') + stream.listenerCount('end')).toBe(0);
  });
});

const delay = (ms: number, value: string) => new Promise((resolve) => setTimeout(resolve, ms, value));
