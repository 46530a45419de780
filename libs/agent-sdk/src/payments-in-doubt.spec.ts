import {
  gateHoldUntil,
  gateOfPendingAnswer,
  isUnanswered,
  MAX_GATE_HOLD_MS,
  MAX_PAYMENTS_IN_DOUBT,
  MAX_PAYMENTS_IN_DOUBT_PER_DOMAIN,
  MAX_PAYMENTS_IN_DOUBT_PER_HOST,
  MIN_GATE_HOLD_MS,
  neverCharged,
  PaymentsInDoubt,
  tookNothing,
} from './payments-in-doubt';

describe('PaymentsInDoubt kept past their hold', () => {
  const held = (until: number) => ({ until });

  it('gives back a page’s payment past its until: its gate may still answer for it', () => {
    const lost = new PaymentsInDoubt<ReturnType<typeof held>>(true);
    lost.keep('https://site.example/a', held(1_000));
    expect(lost.get('https://site.example/a', 5_000)).toEqual(held(1_000));
    lost.forget('https://site.example/a');
    expect(lost.get('https://site.example/a', 5_000)).toBeUndefined();
  });

  it('says whether any payment matches, past its until or not', () => {
    const lost = new PaymentsInDoubt<ReturnType<typeof held>>(true);
    lost.keep('https://site.example/a', held(1_000));
    expect(lost.some((_, payment) => payment.until === 1_000)).toBe(true);
    expect(lost.some((page) => page.endsWith('/b'))).toBe(false);
  });

  it('visits every payment, past its until or not, for an update', () => {
    const lost = new PaymentsInDoubt<{ until: number; seen?: boolean }>(true);
    lost.keep('https://site.example/a', { until: 1_000 });
    lost.keep('https://site.example/b', { until: 9_000 });
    lost.forEach((_, payment) => (payment.seen = true));
    expect([lost.get('https://site.example/a', 5_000), lost.get('https://site.example/b', 5_000)]).toEqual([
      { until: 1_000, seen: true },
      { until: 9_000, seen: true },
    ]);
  });

  it('counts none past its until against the limits, and lets them go only when the room is needed', () => {
    const lost = new PaymentsInDoubt<ReturnType<typeof held>>(true);
    for (let i = 0; i < MAX_PAYMENTS_IN_DOUBT_PER_HOST; i++) lost.keep(`https://site.example/${i}`, held(1_000));
    expect(lost.roomFor('https://site.example/next', 500)).toBe('host');
    expect(lost.roomFor('https://site.example/next', 5_000)).toBe('yes');
    expect(lost.get('https://site.example/0', 5_000)).toEqual(held(1_000)); // still there
    for (let i = 0; i < MAX_PAYMENTS_IN_DOUBT; i++) lost.keep(`https://h${i}.example/p`, held(10_000));
    expect(lost.roomFor('https://other.example/p', 5_000)).toBe('all');
    expect(lost.get('https://site.example/0', 5_000)).toBeUndefined(); // let go for room
  });

  it('holds a payment until the end its owner reads now (a token life learned since), counting it and never letting it go for room before', () => {
    // The end read at each check: the page's payment lasts 4 s longer than its until.
    let longer = 0;
    const lost = new PaymentsInDoubt<ReturnType<typeof held>>(true, (page, payment) =>
      page.endsWith('/held') ? payment.until + longer : payment.until,
    );
    lost.keep('https://site.example/held', held(1_000));
    for (let i = 1; i < MAX_PAYMENTS_IN_DOUBT_PER_HOST; i++) lost.keep(`https://site.example/${i}`, held(10_000));
    expect(lost.roomFor('https://site.example/next', 2_000)).toBe('yes');
    longer = 4_000;
    expect(lost.roomFor('https://site.example/next', 2_000)).toBe('host');
    for (let i = 0; i < MAX_PAYMENTS_IN_DOUBT; i++) lost.keep(`https://h${i}.example/p`, held(1_000));
    expect(lost.roomFor('https://other.example/p', 2_000)).toBe('yes'); // the others let go for room
    expect(lost.get('https://site.example/held', 2_000)).toEqual(held(1_000)); // not this one
    for (let i = 0; i < MAX_PAYMENTS_IN_DOUBT; i++) lost.keep(`https://h${i}.example/p`, held(10_000));
    expect(lost.roomFor('https://other.example/p', 6_000)).toBe('all');
    expect(lost.get('https://site.example/held', 6_000)).toBeUndefined(); // past its end, let go for room
  });
});

describe('PaymentsInDoubt limits', () => {
  const held = (until: number) => ({ until });

  it('counts by domain too: a site on many host names of one domain (wildcard DNS) holds off payments to that domain, not to the others', () => {
    const lost = new PaymentsInDoubt<ReturnType<typeof held>>();
    // As the agent keeps them: only while roomFor says so, 20 failed payments on each of 50 host names.
    const kept: string[] = [];
    for (let host = 0; host < 50; host++)
      for (let i = 0; i < MAX_PAYMENTS_IN_DOUBT_PER_HOST; i++) {
        const page = `https://h${host}.evil.example/${i}`;
        if (lost.roomFor(page, 0) !== 'yes') continue;
        kept.push(page);
        lost.keep(page, held(10_000));
      }
    expect(kept).toHaveLength(MAX_PAYMENTS_IN_DOUBT_PER_DOMAIN);
    expect(lost.roomFor('https://h99.evil.example/p', 0)).toBe('domain');
    expect(lost.roomFor('https://h0.evil.example/p', 0)).toBe('host');
    expect(lost.roomFor('https://honest.example/a', 0)).toBe('yes');
    // Past their end, the domain pays again.
    expect(lost.roomFor('https://h99.evil.example/p', 10_000)).toBe('yes');
  });
});

describe('PaymentsInDoubt', () => {
  const transfer = (until: number) => ({ verifyUrl: 'https://api.example/v1/gates/g/verify', proof: '{}', until });

  it('gives back a page’s transfer until its gate’s end, then drops it', () => {
    const unproven = new PaymentsInDoubt<ReturnType<typeof transfer>>();
    unproven.keep('https://site.example/a', transfer(1_000));
    expect(unproven.get('https://site.example/a', 999)).toEqual(transfer(1_000));
    expect(unproven.get('https://site.example/b', 999)).toBeUndefined();
    expect(unproven.get('https://site.example/a', 1_000)).toBeUndefined();
    expect(unproven.get('https://site.example/a', 0)).toBeUndefined();
  });

  it('forgets a page on demand', () => {
    const unproven = new PaymentsInDoubt<ReturnType<typeof transfer>>();
    unproven.keep('page-1', transfer(10));
    unproven.forget('page-1');
    expect(unproven.get('page-1', 0)).toBeUndefined();
  });

  it('never drops a payment still in doubt to make room: full of them, it has no room for another', () => {
    // Dropping the oldest let a site answering 1,000 payments with failures push out a real
    // payment in doubt, and the next fetch of that page paid it a second time.
    const unproven = new PaymentsInDoubt<ReturnType<typeof transfer>>();
    const page = (i: number) => `https://site-${i % 50}.example/page-${i}`;
    for (let i = 0; i < 1_000; i++) {
      expect(unproven.roomFor(page(i), 0)).toBe('yes');
      unproven.keep(page(i), transfer(i < 50 ? 5 : 10));
    }
    expect(unproven.roomFor('https://another.example/a', 0)).toBe('all');
    expect(unproven.get(page(0), 0)).toBeDefined();
    // Those past their end make room.
    expect(unproven.roomFor('https://another.example/a', 5)).toBe('yes');
    unproven.keep('https://another.example/a', transfer(10));
    expect(unproven.get(page(50), 5)).toBeDefined();
    expect(unproven.get('https://another.example/a', 5)).toBeDefined();
  });

  it('holds at most 20 of one host: a site failing every payment holds off payments to itself only', () => {
    const unproven = new PaymentsInDoubt<ReturnType<typeof transfer>>();
    for (let i = 0; i < 20; i++) unproven.keep(`https://failing.example/p-${i}`, transfer(10));
    expect(unproven.roomFor('https://failing.example/p-new', 0)).toBe('host');
    // Another port or scheme of the host is the same site.
    expect(unproven.roomFor('https://failing.example:8443/p', 0)).toBe('host');
    expect(unproven.roomFor('http://failing.example/p', 0)).toBe('host');
    expect(unproven.roomFor('https://honest.example/p', 0)).toBe('yes');
    expect(unproven.roomFor('https://failing.example/p-new', 10)).toBe('yes');
  });
});

describe('isUnanswered', () => {
  it('is a 202, 408, 429 or 5xx: anything else judged the proof', () => {
    expect([202, 408, 429, 500, 503].map(isUnanswered)).toEqual([true, true, true, true, true]);
    expect([200, 307, 400, 402, 404, 409].map(isUnanswered)).toEqual([false, false, false, false, false, false]);
  });
});

describe('gateOfPendingAnswer', () => {
  const offered = 'https://api.example/v1/gates/g0/verify';

  it('takes the gate a pending answer names on the same API', () => {
    expect(gateOfPendingAnswer({ verify_url: 'https://api.example/v1/gates/g1/verify' }, offered)).toBe(
      'https://api.example/v1/gates/g1/verify',
    );
  });

  it.each([
    ['no body', undefined],
    ['no verify_url', { gate_id: 'g1' }],
    ['not a string', { verify_url: 42 }],
    ['not a URL', { verify_url: 'not a url' }],
    ['another host', { verify_url: 'https://evil.example/v1/gates/g1/verify' }],
    ['another scheme', { verify_url: 'http://api.example/v1/gates/g1/verify' }],
    ['another port', { verify_url: 'https://api.example:8443/v1/gates/g1/verify' }],
    ['another route of the API', { verify_url: 'https://api.example/v1/agents/me/verify' }],
    ['another prefix', { verify_url: 'https://api.example/v2/gates/g1/verify' }],
    ['a query', { verify_url: 'https://api.example/v1/gates/g1/verify?x=1' }],
    ['a fragment', { verify_url: 'https://api.example/v1/gates/g1/verify#x' }],
    ['a deeper path', { verify_url: 'https://api.example/v1/gates/g1/x/verify' }],
  ])('keeps the offered gate for %s', (_, body) => {
    expect(gateOfPendingAnswer(body, offered)).toBe(offered);
  });
});

describe('tookNothing', () => {
  it('is true for the middleware’s 503 that took nothing', () => {
    expect(tookNothing({ detail: 'The payment gate is busy', charged: false })).toBe(true);
  });

  it.each([
    undefined,
    null,
    '<html>503 Service Unavailable</html>',
    {},
    { detail: 'pending', gate_id: 'g1' },
    { charged: 'false' },
    { charged: 0 },
    { charged: true },
  ])('is false for %p', (body) => {
    expect(tookNothing(body)).toBe(false);
  });
});

describe('neverCharged', () => {
  // The gate charged a voucher for 11000, a page of 1000: the channel was at 10000 when it took it.
  it('is true of a total above the channel before that voucher and at most its total', () => {
    expect([10_001n, 10_500n, 11_000n].map((total) => neverCharged(total, 11_000n, 1_000n))).toEqual([
      true,
      true,
      true,
    ]);
  });

  it('is false of a total the channel may have been charged before it, and of one above it', () => {
    expect([9_000n, 10_000n, 11_001n, 20_000n].map((total) => neverCharged(total, 11_000n, 1_000n))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('gateHoldUntil', () => {
  const now = 1_800_000_000_000;

  it('holds past the expiry the gate names, with a minute for clocks', () => {
    const exp = now / 1000 + 20 * 60;
    expect(gateHoldUntil(exp, now)).toBe(exp * 1000 + 60_000);
  });

  it('holds a gate’s default life at least, whatever expiry a site names, or none', () => {
    for (const exp of [undefined, 0, now / 1000 - 60, now / 1000 + 1])
      expect(gateHoldUntil(exp, now)).toBe(now + MIN_GATE_HOLD_MS);
  });

  it('holds 35 minutes at most (as long as an authorization is held), whatever expiry a site names', () => {
    expect(MAX_GATE_HOLD_MS).toBe(35 * 60_000);
    expect(gateHoldUntil(now / 1000 + 24 * 3_600, now)).toBe(now + MAX_GATE_HOLD_MS);
  });
});
