import {
  DEFAULT_SCRYPT_LOG_N,
  hashPassword,
  PASSWORD_HASHES_AT_ONCE,
  PASSWORD_HASHES_WAITING,
} from '../crypto/password';
import { encodeHeaderText, sha256Hex } from '@crawlgate/core';
import { randomUUID } from 'node:crypto';
import { freshIp, registerPublisher } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';

/** A random IPv6 /48 ("fd12:3456:789a"), in the unique local block. */
const freshIpv6Net = () =>
  `fd${Math.floor(Math.random() * 256)
    .toString(16)
    .padStart(
      2,
      '0',
    )}:${Math.floor(Math.random() * 65536).toString(16)}:${Math.floor(Math.random() * 65536).toString(16)}`;
import { startTestApp, type TestApp } from '../../test/test-app';
import { PublishersService } from './publishers.service';

describe('publishers API', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  describe('POST /v1/publishers/register', () => {
    it('creates a publisher and shows an xk_pub_ key once', async () => {
      const response = await app.call('POST', '/v1/publishers/register', {
        body: { email: '  New@Example.com ', password: 'long enough pw', name: 'News' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ email: 'new@example.com', name: 'News', payout_address: null });
      expect(response.body.api_key).toMatch(/^xk_pub_[A-Za-z0-9_-]{43}$/);
      expect(response.body.publisher_id).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('answers 409 for an email already registered, whatever its case', async () => {
      const first = await registerPublisher(app);
      const again = await app.call('POST', '/v1/publishers/register', {
        body: { email: first.email.toUpperCase(), password: 'another password' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(again.status).toBe(409);
      expect(again.body.detail).toMatch(/already registered/);
    });

    it.each([
      ['a zero-width space', 'fred+t@example.com\u200b'],
      ['a soft hyphen', 'gi\u00adna+t@example.com'],
      ['a full-width letter', '\uff43arol+t@example.com'],
      ['a letter and a combining accent (NFD)', 'jose\u0301+t@example.com'],
      ['a domain in Unicode (its ASCII form is another spelling of it)', 'idn+t@bücher.example'],
      ['an ideographic full stop in the domain', 'dot+t@mail.example\u3002com'],
      ['a quoted local part', '"q+t"@example.com'],
    ])('refuses an email with %s, which would look like another account’s (422)', async (_what, email) => {
      const response = await app.call('POST', '/v1/publishers/register', {
        body: { email, password: 'long enough pw' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'email'], type: 'email_format' });
    });

    it('answers 422 with loc/msg/type items for bad fields', async () => {
      const response = await app.call('POST', '/v1/publishers/register', {
        body: { email: 'not-an-email', password: 'short' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ loc: ['body', 'email'], type: 'email_format', input: 'not-an-email' }),
          expect.objectContaining({ loc: ['body', 'password'], type: 'string_too_short' }),
        ]),
      );
      for (const item of response.body.detail) expect(typeof item.msg).toBe('string');
    });

    it('answers 422 for a missing field and for a body that is not an object', async () => {
      const missing = await app.call('POST', '/v1/publishers/register', {
        body: { password: 'long enough pw' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(missing.status).toBe(422);
      expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'email'], type: 'missing' });
      const list = await app.call('POST', '/v1/publishers/register', {
        body: [1, 2],
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(list.status).toBe(422);
      expect(list.body.detail[0]).toMatchObject({ loc: ['body'], type: 'dict_type' });
    });

    it('limits registrations to 5 a minute per IP, with Retry-After', async () => {
      const ip = freshIp();
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 6; i++) {
        last = await app.call('POST', '/v1/publishers/register', {
          body: { email: `rl-${i}-${ip}@example.com`, password: 'long enough pw' },
          headers: { 'x-forwarded-for': ip },
        });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(last!.body.detail).toMatch(/Rate limit/);
      const otherIp = await app.call('POST', '/v1/publishers/register', {
        body: { email: `rl-other-${ip}@example.com`, password: 'long enough pw' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(otherIp.status).toBe(201);
    });
  });

  describe('POST /v1/publishers/login', () => {
    it('rotates the key: the new one works, the old one is 401', async () => {
      const publisher = await registerPublisher(app);
      const login = await app.call('POST', '/v1/publishers/login', {
        body: { email: publisher.email, password: publisher.password },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(login.status).toBe(200);
      expect(login.body.api_key).toMatch(/^xk_pub_/);
      expect(login.body.api_key).not.toBe(publisher.apiKey);
      expect(
        (await app.call('GET', '/v1/publishers/me', { headers: { authorization: `Bearer ${login.body.api_key}` } }))
          .status,
      ).toBe(200);
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(401);
    });

    it('answers 401 for a wrong password or an unknown email, with one message', async () => {
      const publisher = await registerPublisher(app);
      const wrong = await app.call('POST', '/v1/publishers/login', {
        body: { email: publisher.email, password: 'wrong password' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      const unknown = await app.call('POST', '/v1/publishers/login', {
        body: { email: 'nobody@example.com', password: 'whatever pw' },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect([wrong.status, unknown.status]).toEqual([401, 401]);
      expect(wrong.body.detail).toBe(unknown.body.detail);
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(200);
    });

    it('limits logins to 5 a minute per IP', async () => {
      const ip = freshIp();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        statuses.push(
          (
            await app.call('POST', '/v1/publishers/login', {
              body: { email: 'x@example.com', password: 'whatever pw' },
              headers: { 'x-forwarded-for': ip },
            })
          ).status,
        );
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    });

    it('refuses logins to an account from a network where 10 were tried, not its owner’s from another', async () => {
      // Counting every address's attempts together let anyone lock the owner out with 10 wrong passwords
      // (and a thief holding the account's key keep it that way: a login is how the owner takes the key back).
      const publisher = await registerPublisher(app);
      const login = (email: string, password: string, ip = freshIp()) =>
        app.call('POST', '/v1/publishers/login', { body: { email, password }, headers: { 'x-forwarded-for': ip } });
      // Addresses of one network (a /24): each is allowed 5 a minute by the spec's limit.
      const attacker = freshIp().split('.').slice(0, 3).join('.');
      for (let i = 1; i <= 10; i++)
        expect((await login(publisher.email, `guess ${i}`, `${attacker}.${i}`)).status).toBe(401);
      expect((await login(publisher.email, publisher.password, `${attacker}.99`)).status).toBe(429);
      const owner = await login(publisher.email, publisher.password);
      expect(owner.status).toBe(200);
      expect(owner.body.api_key).toMatch(/^xk_pub_/);
    });

    it('lets 10 logins a 15 minutes try one account from one network, and 100 from all of them', async () => {
      const publisher = await registerPublisher(app);
      const other = await registerPublisher(app);
      const login = (email: string, password: string, ip = freshIp()) =>
        app.call('POST', '/v1/publishers/login', { body: { email, password }, headers: { 'x-forwarded-for': ip } });
      // From one network (an IPv4 /24, an IPv6 /48: an IPv6 client holds many /64s)...
      const net = freshIpv6Net();
      for (let i = 1; i <= 10; i++)
        expect((await login(publisher.email, `guess ${i}`, `${net}:${i}::1`)).status).toBe(401);
      const fromThere = await login(publisher.email.toUpperCase(), publisher.password, `${net}:ff::1`);
      expect(fromThere.status).toBe(429);
      expect(fromThere.body.detail).toMatch(/logins for this account from your network/);
      expect(Number(fromThere.headers.get('retry-after'))).toBeGreaterThan(60);
      expect(fromThere.body.api_key).toBeUndefined();
      // ...and from many: the per-IP limit alone lets a guesser with many addresses try passwords without end.
      for (let i = 10; i < 100; i++) expect((await login(publisher.email, `guess ${i}`)).status).toBe(401);
      const blocked = await login(publisher.email, publisher.password);
      expect(blocked.status).toBe(429);
      expect(blocked.body.detail).toMatch(/Too many logins for this account \(100 per 15 minutes\)/);
      // Refused before anything is counted: one holding many networks adds no counter per network.
      const counters = async () =>
        Number((await app.database.sql.query<{ n: string }>('SELECT count(*) AS n FROM password_attempts'))[0].n);
      const before = await counters();
      for (let i = 0; i < 5; i++) expect((await login(publisher.email, 'x', `${freshIpv6Net()}::1`)).status).toBe(429);
      expect(await counters()).toBe(before);
      // The key it has keeps working, and other accounts log in.
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(200);
      expect((await login(other.email, other.password)).status).toBe(200);
      // An email nobody registered answers the same way, so the limit tells nothing about who is registered.
      const nobody = `nobody-${freshIp()}@example.com`;
      const nobodyNet = freshIpv6Net();
      for (let i = 1; i <= 10; i++)
        expect((await login(nobody, `guess ${i}`, `${nobodyNet}:${i}::1`)).status).toBe(401);
      const unknown = await login(nobody, 'one more guess', `${nobodyNet}:ff::1`);
      expect(unknown.status).toBe(429);
      expect(unknown.body.detail).toBe(fromThere.body.detail);
      // About 120 scrypt hashes (the test app's cheaper cost) and as many requests.
    }, 60_000);

    it('counts logins sent at once before checking any: a burst never outruns the budgets', async () => {
      const publisher = await registerPublisher(app);
      const login = (password: string, ip: string) =>
        app.call('POST', '/v1/publishers/login', {
          body: { email: publisher.email, password },
          headers: { 'x-forwarded-for': ip },
        });
      const net = freshIp().split('.').slice(0, 3).join('.');
      const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => login(`guess ${i}`, `${net}.${i + 1}`)));
      const statuses = burst.map((response) => response.status);
      expect(statuses.filter((status) => status === 401)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(30);
      // Two IPv6 networks at once: 20 tried at most, and the owner, from its own network, gets in.
      const nets = [freshIpv6Net(), freshIpv6Net()];
      await Promise.all(Array.from({ length: 60 }, (_, i) => login(`guess ${i}`, `${nets[i % 2]}:${i}::1`)));
      expect((await login(publisher.password, freshIp())).status).toBe(200);
    });

    it('lets an owner log in often from its own networks', async () => {
      const publisher = await registerPublisher(app);
      for (let i = 0; i < 12; i++) {
        const login = await app.call('POST', '/v1/publishers/login', {
          body: { email: publisher.email, password: publisher.password },
          headers: { 'x-forwarded-for': freshIp() },
        });
        expect(login.status).toBe(200);
      }
    });

    it('lets its owner in from a network it used while strangers in ten networks hold the account off', async () => {
      // Strangers holding addresses in ten networks locked the owner out for as long as they kept
      // guessing: 100 wrong passwords a quarter of an hour block every login to the account.
      const home = freshIpv6Net();
      const publisher = await registerPublisher(app, { ip: `${home}:1::1` });
      const login = (password: string, ip = freshIp()) =>
        app.call('POST', '/v1/publishers/login', {
          body: { email: publisher.email, password },
          headers: { 'x-forwarded-for': ip },
        });
      const cafe = freshIpv6Net();
      expect((await login(publisher.password, `${cafe}:1::1`)).status).toBe(200);
      // The account's 100 a quarter of an hour, its owner's login counted.
      for (let i = 0; i < 99; i++) expect((await login(`guess ${i}`)).status).toBe(401);
      const elsewhere = await login(publisher.password);
      expect(elsewhere.status).toBe(429);
      expect(elsewhere.body.detail).toMatch(/Too many logins for this account/);
      // From another address of the network it registered from, the owner gets in.
      const back = await login(publisher.password, `${home}:2::7`);
      expect(back.status).toBe(200);
      expect(back.body.api_key).toMatch(/^xk_pub_/);
      // A wrong password from there is answered as from anywhere else, and counted for that network
      // as anywhere: 10 tries a quarter of an hour (one was the owner's), never more guesses.
      for (let i = 0; i < 8; i++) {
        const near = await login(`near guess ${i}`, `${home}:${i + 3}::1`);
        expect([near.status, near.body.detail]).toEqual([429, elsewhere.body.detail]);
      }
      const again = await login(publisher.password, `${home}:1::1`);
      expect(again.status).toBe(200);
      // Its tries spent, the right password is answered as a wrong one: nothing tells it apart.
      const wrong = await login('one guess too many', `${home}:20::1`);
      const right = await login(publisher.password, `${home}:21::1`);
      expect([wrong.status, wrong.body.detail]).toEqual([429, elsewhere.body.detail]);
      expect([right.status, right.body.detail]).toEqual([429, elsewhere.body.detail]);
      // A new password forgets the networks the old one was used from, but for the one it is changed
      // from: whoever logged in with the old one is held off by the account's block again.
      const office = freshIpv6Net();
      const changed = await app.call('POST', '/v1/publishers/me/password', {
        headers: { authorization: `Bearer ${again.body.api_key}`, 'x-forwarded-for': `${office}:1::1` },
        body: { current_password: publisher.password, new_password: 'a brand new password' },
      });
      expect(changed.status).toBe(200);
      expect((await login('a brand new password', `${cafe}:1::1`)).status).toBe(429);
      expect((await login('a brand new password', `${office}:2::1`)).status).toBe(200);
    }, 180_000);
  });

  describe('GET /v1/publishers/me', () => {
    it('shows the publisher without secrets', async () => {
      const publisher = await registerPublisher(app, { name: 'Daily' });
      const me = await app.call('GET', '/v1/publishers/me', { headers: publisher.auth });
      expect(me.status).toBe(200);
      expect(me.body).toEqual({
        publisher_id: publisher.publisherId,
        email: publisher.email,
        name: 'Daily',
        payout_address: null,
        payout_address_proven: false,
        created_at: expect.any(String),
      });
    });

    it.each([
      ['no header', {}],
      ['a wrong scheme', { authorization: 'Basic abc' }],
      ['a malformed key', { authorization: 'Bearer xk_pub_short' }],
      ['an unknown key', { authorization: `Bearer xk_pub_${'A'.repeat(43)}` }],
      ['a site token', { authorization: `Bearer st_${'A'.repeat(43)}` }],
    ])('answers 401 with a detail for %s', async (_, headers) => {
      const response = await app.call('GET', '/v1/publishers/me', { headers });
      expect(response.status).toBe(401);
      expect(typeof response.body.detail).toBe('string');
    });
  });

  describe('PATCH /v1/publishers/me', () => {
    // An address of its own per test: an address another publisher names is refused (payout-proof.spec).
    let payout: string;
    beforeEach(() => {
      payout = newWallet().address;
    });

    it('changes the name without a password', async () => {
      const publisher = await registerPublisher(app);
      const response = await app.call('PATCH', '/v1/publishers/me', {
        body: { name: 'Renamed' },
        headers: publisher.auth,
      });
      expect(response.status).toBe(200);
      expect(response.body.name).toBe('Renamed');
    });

    it('requires X-Confirm-Password to change payout_address', async () => {
      const publisher = await registerPublisher(app);
      const without = await app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: payout },
        headers: publisher.auth,
      });
      expect(without.status).toBe(401);
      expect(without.body.detail).toMatch(/X-Confirm-Password/);
      const wrong = await app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: payout },
        headers: { ...publisher.auth, 'x-confirm-password': 'nope nope' },
      });
      expect(wrong.status).toBe(401);
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).body.payout_address).toBeNull();

      const right = await app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: payout.toLowerCase() },
        headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
      });
      expect(right.status).toBe(200);
      expect(right.body.payout_address).toBe(payout);
    });

    it('refuses a payout address with a broken EIP-55 checksum, or the zero address, and keeps the one it had', async () => {
      // A typo in a checksummed address would send the publisher's income to a wallet nobody holds.
      const publisher = await registerPublisher(app);
      const confirm = { ...publisher.auth, 'x-confirm-password': publisher.password };
      // One letter's case flipped in EIP-55's own example: still mixed case, so its checksum is read.
      // (Flipped in a random address, the one lower-case letter of an otherwise upper-case one
      // made it all upper case, which is a valid unchecksummed spelling: a flaky test.)
      const example = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
      const flipped = example.replace(/[a-f]/, (letter) => letter.toUpperCase());
      expect(flipped).toBe('0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
      for (const address of [flipped, '0x0000000000000000000000000000000000000000']) {
        const refused = await app.call('PATCH', '/v1/publishers/me', {
          body: { payout_address: address },
          headers: confirm,
        });
        expect(refused.status).toBe(422);
        expect(refused.body.detail).toEqual([
          expect.objectContaining({ loc: ['body', 'payout_address'], msg: expect.stringMatching(/EIP-55/) }),
        ]);
      }
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).body.payout_address).toBeNull();
      for (const spelling of [payout.toUpperCase().replace('0X', '0x'), payout]) {
        const taken = await app.call('PATCH', '/v1/publishers/me', {
          body: { payout_address: spelling },
          headers: confirm,
        });
        expect(taken.status).toBe(200);
        expect(taken.body.payout_address).toBe(payout);
      }
    });

    it('takes X-Confirm-Password as an RFC 8187 ext-value, so a password with spaces at its ends or letters beyond Latin-1 can confirm', async () => {
      const password = ' пароль с пробелом ';
      const publisher = await registerPublisher(app, { password });
      const confirmWith = (value: string) =>
        app.call('PATCH', '/v1/publishers/me', {
          body: { payout_address: payout },
          headers: { ...publisher.auth, 'x-confirm-password': value },
        });
      const malformed = await confirmWith("UTF-8''%E0%A4");
      expect(malformed.status).toBe(401);
      expect(malformed.body.detail).toMatch(/X-Confirm-Password/);
      expect((await confirmWith(encodeHeaderText('not the password'))).status).toBe(401);
      const confirmed = await confirmWith(encodeHeaderText(password));
      expect(confirmed.status).toBe(200);
      expect(confirmed.body.payout_address).toBe(payout);
    });

    it('lets a key holder try 5 passwords per publisher in 15 minutes, whatever the key or address it comes from', async () => {
      // A leaked API key must not let its holder guess the password that guards the payout address.
      const publisher = await registerPublisher(app);
      const other = await registerPublisher(app);
      const attempt = (auth: Record<string, string>, password: string) =>
        app.call('PATCH', '/v1/publishers/me', {
          body: { payout_address: payout },
          headers: { ...auth, 'x-confirm-password': password, 'x-forwarded-for': freshIp() },
        });
      for (let i = 0; i < 4; i++) expect((await attempt(publisher.auth, `guess number ${i}`)).status).toBe(401);
      // A new key (rotation) does not start a new count: the count is the publisher's.
      const rotated = await app.call('POST', '/v1/publishers/me/api-key/rotate', { headers: publisher.auth });
      const auth = { authorization: `Bearer ${rotated.body.api_key}` };
      expect((await attempt(auth, 'guess number 4')).status).toBe(401);
      const blocked = await attempt(auth, publisher.password);
      expect(blocked.status).toBe(429);
      expect(blocked.body.detail).toMatch(/X-Confirm-Password/);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(60);
      expect((await app.call('GET', '/v1/publishers/me', { headers: auth })).body.payout_address).toBeNull();
      // Other requests of this publisher, and other publishers' confirmations, go on.
      expect(
        (await app.call('PATCH', '/v1/publishers/me', { body: { name: 'Still here' }, headers: auth })).status,
      ).toBe(200);
      expect((await attempt(other.auth, other.password)).status).toBe(200);
    });

    it('gives the owner its password checks back once it logs in: a stolen key spending them does not keep it from changing the password (helper-442)', async () => {
      const publisher = await registerPublisher(app);
      const guess = (password: string) =>
        app.call('PATCH', '/v1/publishers/me', {
          body: { payout_address: payout },
          headers: { ...publisher.auth, 'x-confirm-password': password, 'x-forwarded-for': freshIp() },
        });
      for (let i = 0; i < 6; i++) await guess(`a thief's guess ${i}`);
      expect((await guess(publisher.password)).status).toBe(429);
      // The owner logs in (the thief's key stops working) and changes the password at once.
      const login = await app.call('POST', '/v1/publishers/login', {
        body: { email: publisher.email, password: publisher.password },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(login.status).toBe(200);
      const changed = await app.call('POST', '/v1/publishers/me/password', {
        body: { current_password: publisher.password, new_password: 'the owner’s new password' },
        headers: { authorization: `Bearer ${login.body.api_key}`, 'x-forwarded-for': freshIp() },
      });
      expect(changed.status).toBe(200);
    });

    it('answers a login 503 without spending its attempts while the password checks are full (helper-444)', async () => {
      const publisher = await registerPublisher(app);
      const attemptRows = async () =>
        Number((await app.database.sql.query<{ n: string }>('SELECT count(*) AS n FROM password_attempts'))[0].n);
      const before = await attemptRows();
      // The process's password checks taken: running and waiting, as a flood from many networks would.
      const flood = Array.from({ length: PASSWORD_HASHES_AT_ONCE + PASSWORD_HASHES_WAITING }, () =>
        hashPassword('a flood', DEFAULT_SCRYPT_LOG_N).catch(() => undefined),
      );
      const busy = await app.call('POST', '/v1/publishers/login', {
        body: { email: publisher.email, password: publisher.password },
        headers: { 'x-forwarded-for': freshIp() },
      });
      await Promise.all(flood);
      expect([busy.status, busy.headers.get('retry-after')]).toEqual([503, '1']);
      expect(await attemptRows()).toBe(before);
    }, 30_000);

    it('changes the password with the current one: the old password and the old key stop working, the new key is returned', async () => {
      // A leaked password must be replaceable, and its holder's key must end with it.
      const publisher = await registerPublisher(app, { password: 'пароль с пробелом ' });
      const change = (auth: Record<string, string>, body: object) =>
        app.call('POST', '/v1/publishers/me/password', { body, headers: { ...auth, 'x-forwarded-for': freshIp() } });
      const login = (password: string) =>
        app.call('POST', '/v1/publishers/login', {
          body: { email: publisher.email, password },
          headers: { 'x-forwarded-for': freshIp() },
        });

      const wrong = await change(publisher.auth, {
        current_password: 'not it at all',
        new_password: 'a new long password',
      });
      expect(wrong.status).toBe(401);
      expect(wrong.body.detail).toMatch(/current_password/);
      const short = await change(publisher.auth, { current_password: publisher.password, new_password: 'short' });
      expect(short.status).toBe(422);
      expect(short.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'new_password'] })]);
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(200);

      const changed = await change(publisher.auth, {
        current_password: publisher.password,
        new_password: 'a new long password',
      });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('cache-control')).toBe('no-store');
      expect(changed.body).toEqual({ publisher_id: publisher.publisherId, api_key: expect.stringMatching(/^xk_pub_/) });
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(401);
      const fresh = { authorization: `Bearer ${changed.body.api_key}` };
      expect((await app.call('GET', '/v1/publishers/me', { headers: fresh })).status).toBe(200);
      expect((await login(publisher.password)).status).toBe(401);
      expect((await login('a new long password')).status).toBe(200);
    });

    it('issues no key to a login whose password changed while it was checked: the change wins', async () => {
      // A leaked password's holder logging in as the owner changes it must not keep a working key.
      const publisher = await registerPublisher(app);
      const prisma = app.database.prisma;
      const realTransaction = prisma.$transaction.bind(prisma);
      let changed: Awaited<ReturnType<TestApp['call']>> | undefined;
      // The owner's change lands between the login's password check and its transaction writing the new key.
      const write = jest.spyOn(prisma, '$transaction').mockImplementationOnce((async (...args: never[]) => {
        changed = await app.call('POST', '/v1/publishers/me/password', {
          body: { current_password: publisher.password, new_password: 'the owner’s new password' },
          headers: { ...publisher.auth, 'x-forwarded-for': freshIp() },
        });
        return (realTransaction as (...a: never[]) => unknown)(...args);
      }) as never);
      try {
        const login = await app.call('POST', '/v1/publishers/login', {
          body: { email: publisher.email, password: publisher.password },
          headers: { 'x-forwarded-for': freshIp() },
        });
        expect(changed?.status).toBe(200);
        expect(login.status).toBe(401);
        const owner = { authorization: `Bearer ${changed!.body.api_key}` };
        expect((await app.call('GET', '/v1/publishers/me', { headers: owner })).status).toBe(200);
      } finally {
        write.mockRestore();
      }
    });

    it('counts a password change against the same 5 password checks per publisher as a payout change', async () => {
      const publisher = await registerPublisher(app);
      for (let i = 0; i < 5; i++) {
        const guess = await app.call('POST', '/v1/publishers/me/password', {
          body: { current_password: `guess number ${i}`, new_password: 'a new long password' },
          headers: { ...publisher.auth, 'x-forwarded-for': freshIp() },
        });
        expect(guess.status).toBe(401);
      }
      const blocked = await app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: payout },
        headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
      });
      expect(blocked.status).toBe(429);
    });

    it('answers 422 for an invalid payout address', async () => {
      const publisher = await registerPublisher(app);
      const response = await app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: '0x123' },
        headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
      });
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({
        loc: ['body', 'payout_address'],
        type: 'evm_address',
        input: '0x123',
      });
    });
  });

  describe('POST /v1/publishers/me/api-key/rotate', () => {
    it('issues a new key and retires the old one at once', async () => {
      const publisher = await registerPublisher(app);
      const rotated = await app.call('POST', '/v1/publishers/me/api-key/rotate', { headers: publisher.auth });
      expect(rotated.status).toBe(200);
      expect(rotated.body.api_key).toMatch(/^xk_pub_/);
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(401);
      expect(
        (await app.call('GET', '/v1/publishers/me', { headers: { authorization: `Bearer ${rotated.body.api_key}` } }))
          .status,
      ).toBe(200);
    });

    it('answers 401 without a key', async () => {
      expect((await app.call('POST', '/v1/publishers/me/api-key/rotate')).status).toBe(401);
    });

    it('issues nothing for a key that a login replaced while the rotation ran: the owner’s new key stands', async () => {
      const publisher = await registerPublisher(app);
      // The rotation's publisher as the key check read it, with the old (perhaps stolen) key...
      const checked = await app.database.prisma.publisher.findUniqueOrThrow({ where: { id: publisher.publisherId } });
      // ...then the owner logs in with the password, which replaces that key.
      const login = await app.call('POST', '/v1/publishers/login', {
        body: { email: publisher.email, password: publisher.password },
        headers: { 'x-forwarded-for': freshIp() },
      });
      expect(login.status).toBe(200);
      await expect(app.app.get(PublishersService).rotateApiKey(checked)).rejects.toMatchObject({ status: 401 });
      const owner = { authorization: `Bearer ${login.body.api_key}` };
      expect((await app.call('GET', '/v1/publishers/me', { headers: owner })).status).toBe(200);
    });
  });

  describe('a write that fails half-way leaves the account as it was', () => {
    // A database error after the first of an account change's writes (here the network its login is
    // known from, refused by a trigger for one account) must undo the rest: no account without its
    // key shown, no key rotated away and none issued, no password changed behind a 500.
    const accountHash = (email: string) => sha256Hex(`login-${sha256Hex(email)}`);
    async function refuseNetworksOf(email: string): Promise<() => Promise<void>> {
      const name = `refuse_${randomUUID().replace(/-/g, '')}`;
      await app.database.sql.exec(`
        CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.account_hash = '${accountHash(email)}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON known_login_networks
          FOR EACH ROW EXECUTE FUNCTION ${name}();`);
      return () => app.database.sql.exec(`DROP TRIGGER ${name} ON known_login_networks; DROP FUNCTION ${name}();`);
    }
    const login = (email: string, password: string) =>
      app.call('POST', '/v1/publishers/login', {
        body: { email, password },
        headers: { 'x-forwarded-for': freshIp() },
      });

    it('registers nobody when the registration fails', async () => {
      const email = `p-${randomUUID()}@example.com`;
      const allow = await refuseNetworksOf(email);
      try {
        const failed = await app.call('POST', '/v1/publishers/register', {
          body: { email, password: 'long enough pw' },
          headers: { 'x-forwarded-for': freshIp() },
        });
        expect(failed.status).toBe(500);
        expect(await app.database.prisma.publisher.count({ where: { email } })).toBe(0);
      } finally {
        await allow();
      }
      expect((await registerPublisher(app, { email })).email).toBe(email);
    });

    it('keeps the current key when a login fails', async () => {
      const publisher = await registerPublisher(app);
      const allow = await refuseNetworksOf(publisher.email);
      try {
        expect((await login(publisher.email, publisher.password)).status).toBe(500);
      } finally {
        await allow();
      }
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(200);
    });

    it('keeps the password, the key and the known networks when a password change fails', async () => {
      const publisher = await registerPublisher(app);
      const known = await app.database.prisma.knownLoginNetwork.count({
        where: { accountHash: accountHash(publisher.email) },
      });
      expect(known).toBe(1);
      const allow = await refuseNetworksOf(publisher.email);
      try {
        const failed = await app.call('POST', '/v1/publishers/me/password', {
          body: { current_password: publisher.password, new_password: 'a new long password' },
          headers: { ...publisher.auth, 'x-forwarded-for': freshIp() },
        });
        expect(failed.status).toBe(500);
      } finally {
        await allow();
      }
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(200);
      expect(
        await app.database.prisma.knownLoginNetwork.count({ where: { accountHash: accountHash(publisher.email) } }),
      ).toBe(known);
      expect((await login(publisher.email, 'a new long password')).status).toBe(401);
      expect((await login(publisher.email, publisher.password)).status).toBe(200);
    });
  });

  it('stores keys and passwords only as hashes', async () => {
    const publisher = await registerPublisher(app);
    const rows = await app.database.sql.query<Record<string, unknown>>('SELECT * FROM publishers WHERE id = $1', [
      publisher.publisherId,
    ]);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(publisher.apiKey);
    expect(stored).not.toContain(publisher.password);
    expect(rows[0].api_key_hash).toBe(sha256Hex(publisher.apiKey));
    // At the app's configured cost (the test app's; production's is password.spec's).
    expect(String(rows[0].password_hash)).toMatch(
      new RegExp(`^scrypt\\$${2 ** app.config.passwordScryptLogN}\\$8\\$1\\$`),
    );
  });
});
