import { untilAborted } from './abort';

describe('untilAborted', () => {
  it('settles as the promise does while the signal has not aborted', async () => {
    await expect(untilAborted(Promise.resolve(1), new AbortController().signal)).resolves.toBe(1);
    await expect(untilAborted(Promise.reject(new Error('no')), undefined)).rejects.toThrow('no');
  });

  it('rejects with the signal’s reason when it aborts first, or had aborted already', async () => {
    const never = new Promise<never>(() => undefined);
    const caller = new AbortController();
    const waiting = untilAborted(never, caller.signal);
    caller.abort(new Error('the caller gave up'));
    await expect(waiting).rejects.toThrow('the caller gave up');
    await expect(untilAborted(never, caller.signal)).rejects.toThrow('the caller gave up');
  });
});
