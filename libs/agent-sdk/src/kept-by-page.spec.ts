import { KeptByPage } from './kept-by-page';

describe('KeptByPage', () => {
  const NOW = 1_000_000;

  it('gives a value back until its last use as read now, then drops it', () => {
    const ends = new Map([['a', NOW + 10]]);
    const kept = new KeptByPage<string>((_value, page) => ends.get(page)!, 10);
    kept.keep('a', 'payment', NOW);
    expect(kept.get('a', NOW + 9)).toBe('payment');
    // Its end lengthened since it was kept (a longer life learned): read at each get.
    ends.set('a', NOW + 20);
    expect(kept.get('a', NOW + 19)).toBe('payment');
    expect(kept.get('a', NOW + 20)).toBeUndefined();
    ends.set('a', NOW + 30);
    expect(kept.get('a', NOW)).toBeUndefined(); // dropped
  });

  it('forgets a value', () => {
    const kept = new KeptByPage<string>(() => NOW + 10, 10);
    kept.keep('a', 'payment', NOW);
    kept.forget('a');
    expect(kept.get('a', NOW)).toBeUndefined();
  });

  it('full, drops the values past their last use first, then its oldest', () => {
    const ends: Record<string, number> = { old: NOW + 100, ended: NOW, newer: NOW + 100 };
    const kept = new KeptByPage<string>((value) => ends[value] ?? NOW + 100, 2);
    kept.keep('old', 'old', NOW - 10);
    kept.keep('ended', 'ended', NOW - 10);
    kept.keep('newer', 'newer', NOW);
    expect([kept.get('old', NOW), kept.get('ended', NOW), kept.get('newer', NOW)]).toEqual(['old', undefined, 'newer']);
    kept.keep('newest', 'newest', NOW);
    expect([kept.get('old', NOW), kept.get('newer', NOW), kept.get('newest', NOW)]).toEqual([
      undefined,
      'newer',
      'newest',
    ]);
  });

  it("full, drops the oldest value of the group holding the most, not another group's older one", () => {
    // Dropped oldest first, a site refusing payments on many pages pushed out an older site's
    // refused payment, whose page was then paid anew though that payment may have gone through.
    const groupsOf = (page: string) => [page.split('/')[0]];
    const kept = new KeptByPage<string>(() => NOW + 100, 4, groupsOf);
    kept.keep('honest/a', 'honest', NOW);
    kept.keep('evil/1', 'evil 1', NOW);
    kept.keep('evil/2', 'evil 2', NOW);
    kept.keep('other/b', 'other', NOW);
    kept.keep('evil/3', 'evil 3', NOW);
    expect(['honest/a', 'evil/1', 'evil/2', 'other/b', 'evil/3'].map((page) => kept.get(page, NOW))).toEqual([
      'honest',
      undefined,
      'evil 2',
      'other',
      'evil 3',
    ]);
    // Groups as large: the newest group's goes, so a crowd of newcomers pushes out its own, not the older sites'.
    const even = new KeptByPage<string>(() => NOW + 100, 3, groupsOf);
    for (const page of ['a/1', 'b/1', 'c/1', 'd/1']) even.keep(page, page, NOW);
    expect(['a/1', 'b/1', 'c/1', 'd/1'].map((page) => even.get(page, NOW))).toEqual(['a/1', 'b/1', undefined, 'd/1']);
  });

  it('full, goes down the groups, widest first: a site sharing its widest group with a crowd keeps its value', () => {
    // Without a public suffix list, victim.co.uk and evil.co.uk share "co.uk"; one label more parts them.
    const groupsOf = (page: string) => {
      const host = page.split('/')[0];
      return [host.split('.').slice(-2).join('.'), host.split('.').slice(-3).join('.'), host];
    };
    const kept = new KeptByPage<string>(() => NOW + 100, 4, groupsOf);
    kept.keep('victim.co.uk/a', 'victim', NOW);
    kept.keep('p1.evil.co.uk/1', 'evil 1', NOW);
    kept.keep('p2.evil.co.uk/2', 'evil 2', NOW);
    kept.keep('p1.evil.co.uk/3', 'evil 3', NOW);
    kept.keep('p3.evil.co.uk/4', 'evil 4', NOW);
    expect(kept.get('victim.co.uk/a', NOW)).toBe('victim');
    // Of evil.co.uk's hosts, p1 holds the most: its oldest went.
    expect(['p1.evil.co.uk/1', 'p2.evil.co.uk/2', 'p1.evil.co.uk/3'].map((page) => kept.get(page, NOW))).toEqual([
      undefined,
      'evil 2',
      'evil 3',
    ]);
  });
});
