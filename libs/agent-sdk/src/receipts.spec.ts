import {
  ACCESS_TOKEN_TTL_SECONDS,
  MAX_ACCESS_TOKEN_TTL_SECONDS,
  MIN_ACCESS_TOKEN_TTL_SECONDS,
  signAccessToken,
} from '@crawlgate/core';
import type { Offer } from './offers';
import { receiptUntil, Receipts, type Receipt } from './receipts';

const NOW_MS = 1_800_000_000_000;

const receipt = (until: number): Receipt => ({
  header: ['PAYMENT-SIGNATURE', 'header'],
  // What was paid is the agent's to read; receipts only keep it.
  paidAt: { url: 'https://site.example/page', offer: { amount: 10_000n } as Offer },
  sentAt: NOW_MS,
  until,
});

const token = (exp: number) =>
  signAccessToken({ gate_id: 'g', site_id: 's', url: '/page', kid: 'k', iat: NOW_MS / 1000, exp }, 'secret');

describe('receiptUntil', () => {
  const tokenFor = (iat: number, exp: number) =>
    signAccessToken({ gate_id: 'g', site_id: 's', url: '/page', kid: 'k', iat, exp }, 'secret');

  it('is as long after the send as the token lives, within the longest an access token lives', () => {
    expect(receiptUntil(token(NOW_MS / 1000 + 3600), NOW_MS)).toBe(NOW_MS + 3_600_000);
    expect(receiptUntil(token(NOW_MS / 1000 + 10 * MAX_ACCESS_TOKEN_TTL_SECONDS), NOW_MS)).toBe(
      NOW_MS + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000,
    );
  });

  it('is never shorter than the shortest token the API issues: a life a front forged ends it no sooner', () => {
    expect(receiptUntil(token(NOW_MS / 1000), NOW_MS)).toBe(NOW_MS + MIN_ACCESS_TOKEN_TTL_SECONDS * 1000);
    expect(receiptUntil(token(NOW_MS / 1000 - 3600), NOW_MS)).toBe(NOW_MS + MIN_ACCESS_TOKEN_TTL_SECONDS * 1000);
  });

  it("is a short-lived token's own life: a gate issuing 2-minute tokens sells the page anew after 2 minutes", () => {
    expect(receiptUntil(token(NOW_MS / 1000 + 120), NOW_MS)).toBe(NOW_MS + 120_000);
  });

  it('counts from when the payment was sent, not from when its token came: one asked for 20 minutes later ends with it', () => {
    const sentAt = NOW_MS - 20 * 60_000;
    const iat = sentAt / 1000;
    expect(receiptUntil(tokenFor(iat, iat + ACCESS_TOKEN_TTL_SECONDS), sentAt)).toBe(NOW_MS + 10 * 60_000);
  });

  it("lasts as long as its token lives after the send on an agent clock ahead of the API's", () => {
    const iat = NOW_MS / 1000 - 300;
    expect(receiptUntil(tokenFor(iat, iat + ACCESS_TOKEN_TTL_SECONDS), NOW_MS)).toBe(
      NOW_MS + ACCESS_TOKEN_TTL_SECONDS * 1000,
    );
  });

  it('lasts until its token expires when the token was issued after the send (a settlement confirmed late)', () => {
    const iat = NOW_MS / 1000 + 40;
    expect(receiptUntil(tokenFor(iat, iat + 60), NOW_MS)).toBe(NOW_MS + 100_000);
  });

  it("is a token's default life from the send when no readable token came", () => {
    expect(receiptUntil(undefined, NOW_MS)).toBe(NOW_MS + ACCESS_TOKEN_TTL_SECONDS * 1000);
    expect(receiptUntil('not a token', NOW_MS)).toBe(NOW_MS + ACCESS_TOKEN_TTL_SECONDS * 1000);
  });
});

describe('Receipts', () => {
  it('gives back a page’s receipt past its until (a life a front may have forged), until the longest a token lives from its send, then drops it', () => {
    const receipts = new Receipts();
    const lastUse = NOW_MS + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000;
    receipts.keep('a', receipt(NOW_MS + 1000), NOW_MS);
    expect(receipts.get('a', NOW_MS + 1000)).toEqual(receipt(NOW_MS + 1000));
    expect(receipts.get('a', lastUse - 1)).toEqual(receipt(NOW_MS + 1000));
    expect(receipts.get('a', lastUse)).toBeUndefined();
    expect(receipts.get('a', NOW_MS)).toBeUndefined(); // dropped
  });

  it('gives back a receipt until its notBefore when that is later than the longest a token lives from its send (a lost voucher its gate could take late)', () => {
    const receipts = new Receipts();
    const notBefore = NOW_MS + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000 + 35 * 60_000;
    const late = { ...receipt(NOW_MS + 1000), notBefore };
    receipts.keep('a', late, NOW_MS);
    expect(receipts.get('a', notBefore - 1)).toEqual(late);
    expect(receipts.get('a', notBefore)).toBeUndefined();
  });

  it('gives back a receipt kept with no token until the longest a token lives from its lastIssue (an authorization settled late)', () => {
    const receipts = new Receipts();
    const lastIssue = NOW_MS + 300_000;
    const tokenless = { ...receipt(NOW_MS + 1000), lastIssue };
    receipts.keep('a', tokenless, NOW_MS);
    const lastUse = lastIssue + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000;
    expect(receipts.get('a', lastUse - 1)).toEqual(tokenless);
    expect(receipts.get('a', lastUse)).toBeUndefined();
  });

  it('forgets a page’s receipt when told', () => {
    const receipts = new Receipts();
    receipts.keep('a', receipt(NOW_MS + 1000), NOW_MS);
    receipts.forget('a');
    expect(receipts.get('a', NOW_MS)).toBeUndefined();
  });

  it('keeps no more than its bound, dropping those past their last use first, then the oldest', () => {
    const receipts = new Receipts(2);
    const week = MAX_ACCESS_TOKEN_TTL_SECONDS * 1000;
    receipts.keep('stale', { ...receipt(NOW_MS), sentAt: NOW_MS - week }, NOW_MS - 1);
    receipts.keep('old', receipt(NOW_MS + 5000), NOW_MS);
    receipts.keep('new', receipt(NOW_MS + 5000), NOW_MS + 100);
    expect(receipts.get('old', NOW_MS + 100)).toBeDefined();
    receipts.keep('newest', receipt(NOW_MS + 5000), NOW_MS + 100);
    expect(receipts.get('new', NOW_MS + 100)).toBeDefined();
    expect(receipts.get('newest', NOW_MS + 100)).toBeDefined();
    expect(receipts.get('old', NOW_MS + 100)).toBeUndefined();
  });

  it('never drops a receipt to make room for being past its until: a front forging a short life would choose which goes', () => {
    const receipts = new Receipts(2);
    receipts.keep('honest', receipt(NOW_MS + 30 * 60_000), NOW_MS);
    receipts.keep('shortened', receipt(NOW_MS + 60_000), NOW_MS);
    receipts.keep('next', receipt(NOW_MS + 30 * 60_000), NOW_MS + 61_000);
    expect(receipts.get('shortened', NOW_MS + 61_000)).toBeDefined();
    expect(receipts.get('honest', NOW_MS + 61_000)).toBeUndefined(); // the oldest
  });
});
