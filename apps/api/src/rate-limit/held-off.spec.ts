import { HeldOff } from './held-off';

describe('HeldOff', () => {
  it('holds a key off until its time, then forgets it', () => {
    let now = 1_000;
    const heldOff = new HeldOff(10, () => now);
    expect(heldOff.heldOffFor('site-a')).toBe(0);
    heldOff.holdOff('site-a', 61_000);
    expect(heldOff.heldOffFor('site-a')).toBe(60_000);
    expect(heldOff.heldOffFor('site-b')).toBe(0);
    now = 61_000;
    expect(heldOff.heldOffFor('site-a')).toBe(0);
  });

  it('lets the key held off longest ago go first when full', () => {
    const heldOff = new HeldOff(2, () => 0);
    heldOff.holdOff('a', 100);
    heldOff.holdOff('b', 100);
    heldOff.holdOff('a', 200); // held off again: now the newest
    heldOff.holdOff('c', 100);
    expect(['a', 'b', 'c'].map((key) => heldOff.heldOffFor(key) > 0)).toEqual([true, false, true]);
  });

  it('tells whether any key is held off now', () => {
    let now = 0;
    const heldOff = new HeldOff(10, () => now);
    expect(heldOff.holdsAny()).toBe(false);
    heldOff.holdOff('a', 100);
    heldOff.holdOff('b', 200);
    now = 150;
    expect(heldOff.holdsAny()).toBe(true);
    now = 200;
    expect(heldOff.holdsAny()).toBe(false);
  });
});
