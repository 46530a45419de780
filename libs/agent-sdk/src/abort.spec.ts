import { graceAfter, untilAborted } from './abort';

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

describe('graceAfter', () => {
  it('aborts its signal a grace after the caller’s, once the caller has given up', async () => {
    const caller = new AbortController();
    const grace = graceAfter(caller.signal, 50);
    expect(grace.signal?.aborted).toBe(false);
    caller.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(grace.signal?.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(grace.signal?.reason).toMatchObject({ name: 'TimeoutError' });
  });

  it('starts the grace at once for a caller that had given up, and none once released or without a caller', async () => {
    const grace = graceAfter(AbortSignal.abort(), 20);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(grace.signal?.aborted).toBe(true);
    const caller = new AbortController();
    const released = graceAfter(caller.signal, 20);
    released.release();
    caller.abort();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(released.signal?.aborted).toBe(false);
    expect(graceAfter(undefined, 20).signal).toBeUndefined();
  });
});
