import { untilAborted, withTimeout } from './abort';

describe('withTimeout', () => {
  it('aborts at the caller’s abort or at the timeout, whichever comes first', async () => {
    const caller = new AbortController();
    const bounded = withTimeout(caller.signal, 60_000);
    expect(bounded.aborted).toBe(false);
    caller.abort(new Error('the caller gave up'));
    expect(bounded.aborted).toBe(true);
    const timedOut = withTimeout(undefined, 1);
    await new Promise((resolve) => timedOut.addEventListener('abort', resolve));
    expect(timedOut.reason).toMatchObject({ name: 'TimeoutError' });
  });
});

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
