import { DeadlineError, withinDeadline } from './deadline';

describe('withinDeadline', () => {
  it('settles as the work does when it is in time', async () => {
    await expect(withinDeadline(Promise.resolve(7), 50)).resolves.toBe(7);
    await expect(withinDeadline(Promise.reject(new Error('down')), 50)).rejects.toThrow('down');
  });

  it('rejects with a DeadlineError when the work never settles', async () => {
    const late = withinDeadline(new Promise(() => undefined), 20);
    await expect(late).rejects.toBeInstanceOf(DeadlineError);
    await expect(late).rejects.toThrow('no answer within 20 ms');
  });
});
