import { ACCESS_TOKEN_TTL_SECONDS, MAX_ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from '@crawlgate/core';
import { TokenLives } from './token-lives';

const tokenLiving = (seconds: number) =>
  signAccessToken({ gate_id: 'g', site_id: 's', url: '/a', kid: 'k', iat: 1_000, exp: 1_000 + seconds }, 'secret');

describe('TokenLives', () => {
  it("keeps the longest life each site's tokens were seen to have, never below the default", () => {
    const lives = new TokenLives();
    expect(lives.lifeMs('a.test')).toBe(ACCESS_TOKEN_TTL_SECONDS * 1000);
    lives.learn('a.test', tokenLiving(7_200));
    lives.learn('a.test', tokenLiving(3_600)); // a shorter one later does not shorten it
    lives.learn('b.test', tokenLiving(60));
    expect(lives.lifeMs('a.test')).toBe(7_200_000);
    expect(lives.lifeMs('b.test')).toBe(ACCESS_TOKEN_TTL_SECONDS * 1000);
    expect(lives.lifeMs('c.test')).toBe(ACCESS_TOKEN_TTL_SECONDS * 1000);
  });

  it('bounds a claimed life by the longest a token lives, and ignores what it cannot read', () => {
    const lives = new TokenLives();
    lives.learn('a.test', tokenLiving(365 * 86_400));
    lives.learn('b.test', 'not.a-token');
    expect(lives.lifeMs('a.test')).toBe(MAX_ACCESS_TOKEN_TTL_SECONDS * 1000);
    expect(lives.lifeMs('b.test')).toBe(ACCESS_TOKEN_TTL_SECONDS * 1000);
  });

  it('forgets the site learned longest ago once full', () => {
    const lives = new TokenLives(2);
    lives.learn('a.test', tokenLiving(7_200));
    lives.learn('b.test', tokenLiving(7_200));
    lives.learn('a.test', tokenLiving(9_000)); // learned again: the newest
    lives.learn('c.test', tokenLiving(7_200));
    expect(lives.lifeMs('b.test')).toBe(ACCESS_TOKEN_TTL_SECONDS * 1000);
    expect(lives.lifeMs('a.test')).toBe(9_000_000);
    expect(lives.lifeMs('c.test')).toBe(7_200_000);
  });
});
