import { paymentHistoryMessage, WALLET_PROOF_MAX_SECONDS } from '@crawlgate/core';
import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { deployTestWallet, historyHeaders, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { encodeCursor } from './cursor';
import { insertPayment, newAddress, walkPages } from './test-payments';

const at = (iso: string) => new Date(iso);
type Signer = ReturnType<typeof newWallet>;

describe('agents API', () => {
  let app: TestApp;
  let owner: TestPublisher;
  let siteA: TestSite;
  let siteB: TestSite;
  const wallet = (address: string) => ({ 'x-wallet-address': address });

  beforeAll(async () => {
    app = await startTestApp();
    owner = await registerPublisher(app);
    siteA = await createSite(app, owner);
    siteB = await createSite(app, owner);
  });
  afterAll(() => app.close());

  describe('GET /v1/agents/me', () => {
    it('answers a wallet that never paid with zeros and nulls, no registration needed', async () => {
      const address = newAddress();
      const response = await app.call('GET', '/v1/agents/me', { headers: wallet(address) });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        address,
        payments_count: 0,
        total_spent_usd: '0',
        total_spent_amount: '0',
        first_payment_at: null,
        last_payment_at: null,
        sites_count: 0,
      });
    });

    it('totals confirmed payments across sites, and nobody else’s or unconfirmed ones', async () => {
      const address = newAddress();
      await insertPayment(app, owner, siteA, {
        payer: address,
        amount: 5000n,
        confirmedAt: at('2026-10-01T08:00:00.000Z'),
      });
      await insertPayment(app, owner, siteA, {
        payer: address,
        amount: 5000n,
        confirmedAt: at('2026-10-03T09:30:00.250Z'),
      });
      await insertPayment(app, owner, siteB, {
        payer: address,
        amount: 1_000_000n,
        confirmedAt: at('2026-10-02T00:00:00.000Z'),
      });
      await insertPayment(app, owner, siteB, { payer: address, amount: 7n, status: 'submitted' });
      await insertPayment(app, owner, siteB, { payer: address, amount: 7n, status: 'submitting' });
      await insertPayment(app, owner, siteA, { payer: newAddress(), amount: 3000n });

      const response = await app.call('GET', '/v1/agents/me', { headers: wallet(address) });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        address,
        payments_count: 3,
        total_spent_usd: '1.01',
        total_spent_amount: '1010000',
        first_payment_at: '2026-10-01T08:00:00.000Z',
        last_payment_at: '2026-10-03T09:30:00.250Z',
        sites_count: 2,
      });
    });

    it('finds the same wallet by its lower-case and checksummed spellings, and answers checksummed', async () => {
      const address = newAddress();
      await insertPayment(app, owner, siteA, { payer: address, amount: 1234n });
      const lower = await app.call('GET', '/v1/agents/me', { headers: wallet(address.toLowerCase()) });
      const checksummed = await app.call('GET', '/v1/agents/me', { headers: wallet(address) });
      expect(lower.status).toBe(200);
      expect(lower.body).toEqual(checksummed.body);
      expect(lower.body).toMatchObject({ address, payments_count: 1, total_spent_usd: '0.001234' });
    });

    it.each([
      ['missing', undefined],
      ['not hex', `0x${'g'.repeat(40)}`],
      ['too short', `0x${'a'.repeat(39)}`],
      ['without 0x', 'a'.repeat(40)],
    ])('answers 401 for a %s address, on the profile and the history', async (_, address) => {
      const headers = address === undefined ? {} : wallet(address);
      for (const path of ['/v1/agents/me', '/v1/agents/me/payments?limit=0']) {
        const response = await app.call('GET', path, { headers });
        expect(response.status).toBe(401);
        expect(response.body.detail).toMatch(/X-Wallet-Address/);
      }
    });
  });

  describe('GET /v1/agents/me/payments', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const origin = () => new URL(app.baseUrl).origin;

    it('answers a stranger who names the address but holds no proof 401, with no item', async () => {
      const address = newAddress();
      await insertPayment(app, owner, siteA, { payer: address, amount: 5000n, url: '/secret/path' });
      const response = await app.call('GET', '/v1/agents/me/payments', { headers: wallet(address) });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ detail: expect.stringMatching(/Missing X-Wallet-Proof.*personal_sign/) });
    });

    it.each([
      [
        'another wallet’s signature',
        async (victim: Signer) => historyHeaders(app, newWallet(), { address: victim.address }),
      ],
      ['a proof that expired', async (victim: Signer) => historyHeaders(app, victim, { expires: now() - 1 })],
      ['a proof expiring now', async (victim: Signer) => historyHeaders(app, victim, { expires: now() })],
      [
        'a proof expiring too far ahead',
        async (victim: Signer) => historyHeaders(app, victim, { expires: now() + WALLET_PROOF_MAX_SECONDS + 5 }),
      ],
      [
        'a signature of another message',
        async (victim: Signer) => historyHeaders(app, victim, { message: 'Crawlgate transfer proof' }),
      ],
      [
        'a signature for another wallet’s history',
        async (victim: Signer) =>
          historyHeaders(app, victim, {
            message: paymentHistoryMessage(newAddress(), origin(), now() + 60),
            expires: now() + 60,
          }),
      ],
      [
        // A site that learned the agent's proof (the agent posts it where a 402's verify_url pointed)
        // replays it here: it was signed for that site's origin.
        'a signature for another API origin',
        async (victim: Signer) =>
          historyHeaders(app, victim, {
            message: paymentHistoryMessage(victim.address, 'https://hostile-site.example', now() + 60),
            expires: now() + 60,
          }),
      ],
      [
        'a signature without an API origin (the earlier message)',
        async (victim: Signer) =>
          historyHeaders(app, victim, {
            message: `Crawlgate payment history of ${victim.address.toLowerCase()} until ${now() + 60}`,
            expires: now() + 60,
          }),
      ],
      [
        'a signature for another expiry',
        async (victim: Signer) =>
          historyHeaders(app, victim, {
            message: paymentHistoryMessage(victim.address, origin(), now() + 60),
            expires: now() + 61,
          }),
      ],
      [
        'a proof that is not <expires>.<signature>',
        async (victim: Signer) => ({ ...wallet(victim.address), 'x-wallet-proof': `${now() + 60}.nothex` }),
      ],
      [
        'a signature of the right length that recovers no one',
        async (victim: Signer) => ({
          ...wallet(victim.address),
          'x-wallet-proof': `${now() + 60}.0x${'00'.repeat(65)}`,
        }),
      ],
      [
        'an ERC-8010 wrapper around nothing (junk viem fails to parse)',
        async (victim: Signer) => ({
          ...wallet(victim.address),
          'x-wallet-proof': `${now() + 60}.0x${'00'.repeat(40)}${'8010'.repeat(16)}`,
        }),
      ],
    ])('answers 401 and no item for %s', async (_, headersFor) => {
      const victim = newWallet();
      await insertPayment(app, owner, siteA, { payer: victim.address, amount: 5000n, url: '/secret/path' });
      const response = await app.call('GET', '/v1/agents/me/payments', { headers: await headersFor(victim) });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ detail: expect.stringMatching(/X-Wallet-Proof.*personal_sign/) });
    });

    it('names the origin it expects in the 401 for a proof signed for another', async () => {
      const victim = newWallet();
      const response = await app.call('GET', '/v1/agents/me/payments', {
        headers: await historyHeaders(app, victim, {
          message: paymentHistoryMessage(victim.address, 'https://alias.example', now() + 60),
          expires: now() + 60,
        }),
      });
      expect(response.status).toBe(401);
      expect(response.body.detail).toContain(`whose origin here is ${origin()}`);
    });

    it('answers the wallet’s own proof 200 with its items, not to be stored', async () => {
      const agent = newWallet();
      await insertPayment(app, owner, siteA, { payer: agent.address, amount: 5000n, url: '/secret/path' });
      const response = await app.call('GET', '/v1/agents/me/payments', {
        headers: await historyHeaders(app, agent, { address: agent.address.toLowerCase(), expires: now() + 30 }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.body.items).toEqual([expect.objectContaining({ url: '/secret/path', amount: '5000' })]);
    });

    it('takes a contract wallet’s ERC-1271 signature (its owner’s key), not a stranger’s', async () => {
      const keyHolder = newWallet();
      const smartWallet = await deployTestWallet(app, keyHolder);
      await insertPayment(app, owner, siteB, { payer: smartWallet, amount: 7000n, url: '/smart/path' });
      const stranger = await app.call('GET', '/v1/agents/me/payments', {
        headers: await historyHeaders(app, newWallet(), { address: smartWallet }),
      });
      expect(stranger.status).toBe(401);
      const own = await app.call('GET', '/v1/agents/me/payments', {
        headers: await historyHeaders(app, keyHolder, { address: smartWallet }),
      });
      expect(own.status).toBe(200);
      expect(own.body.items).toEqual([expect.objectContaining({ url: '/smart/path' })]);
    });

    it('pages through confirmed payments newest first, with no duplicates and a null cursor at the end', async () => {
      const agent = newWallet();
      const address = agent.address;
      const same = at('2026-10-05T12:00:00.000Z');
      const paid = [
        await insertPayment(app, owner, siteA, {
          payer: address,
          amount: 1000n,
          url: '/a',
          confirmedAt: at('2026-10-01T00:00:00.000Z'),
        }),
        await insertPayment(app, owner, siteB, {
          payer: address,
          amount: 2000n,
          url: '/b',
          confirmedAt: at('2026-10-02T00:00:00.000Z'),
        }),
        // Two in the same millisecond: the id orders them, and the cursor must not skip or repeat one.
        await insertPayment(app, owner, siteA, { payer: address, amount: 3000n, url: '/c', confirmedAt: same }),
        await insertPayment(app, owner, siteA, { payer: address, amount: 4000n, url: '/d', confirmedAt: same }),
        await insertPayment(app, owner, siteB, {
          payer: address,
          amount: 5000n,
          url: '/e',
          confirmedAt: at('2026-10-06T00:00:00.000Z'),
        }),
        await insertPayment(app, owner, siteA, {
          payer: address,
          amount: 6000n,
          url: '/f',
          confirmedAt: at('2026-10-07T00:00:00.000Z'),
        }),
        await insertPayment(app, owner, siteA, {
          payer: address,
          amount: 7000n,
          url: '/g',
          confirmedAt: at('2026-10-08T00:00:00.000Z'),
        }),
      ];
      await insertPayment(app, owner, siteA, { payer: address, amount: 9n, status: 'submitted' });
      await insertPayment(app, owner, siteA, { payer: newAddress(), amount: 9n });
      const expected = [...paid]
        .sort((x, y) => y.confirmedAt!.getTime() - x.confirmedAt!.getTime() || (y.id < x.id ? -1 : 1))
        .map((p) => p.id);

      const { sizes, ids } = await walkPages(app, '/v1/agents/me/payments', await historyHeaders(app, agent), 3);
      expect(sizes).toEqual([3, 3, 1]);
      expect(ids).toEqual(expected);
    });

    it('shows each payment’s gate, site, path, amount, price, transaction, network and time', async () => {
      const agent = newWallet();
      const address = agent.address;
      const payment = await insertPayment(app, owner, siteB, {
        payer: address,
        amount: 5000n,
        url: '/articles/42',
        confirmedAt: at('2026-10-09T10:11:12.013Z'),
      });
      const response = await app.call('GET', '/v1/agents/me/payments', {
        headers: await historyHeaders(app, agent, { address: address.toLowerCase() }),
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        items: [
          {
            payment_id: payment.id,
            gate_id: payment.gateId,
            site_id: siteB.siteId,
            url: '/articles/42',
            amount: '5000',
            price_usd: '0.005',
            tx_hash: payment.txHash,
            scheme: 'exact',
            channel_id: null,
            network: 'local',
            paid_at: '2026-10-09T10:11:12.013Z',
          },
        ],
        next_cursor: null,
      });
    });

    it('returns 20 by default and up to 100 when asked', async () => {
      const agent = newWallet();
      const address = agent.address;
      const base = Date.parse('2026-09-01T00:00:00Z');
      for (let i = 0; i < 21; i++)
        await insertPayment(app, owner, siteA, { payer: address, amount: 1n, confirmedAt: new Date(base + i * 1000) });
      const first = await app.call('GET', '/v1/agents/me/payments', { headers: await historyHeaders(app, agent) });
      expect(first.body.items).toHaveLength(20);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const all = await app.call('GET', '/v1/agents/me/payments?limit=100', {
        headers: await historyHeaders(app, agent),
      });
      expect(all.body.items).toHaveLength(21);
      expect(all.body.next_cursor).toBeNull();
    });

    it('answers an empty page for a wallet that never paid', async () => {
      const response = await app.call('GET', '/v1/agents/me/payments', {
        headers: await historyHeaders(app, newWallet()),
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ items: [], next_cursor: null });
    });

    it.each([
      ['limit=0', 'limit', 'greater_than_equal'],
      ['limit=101', 'limit', 'less_than_equal'],
      ['limit=abc', 'limit', 'int_parsing'],
      ['limit=-1', 'limit', 'int_parsing'],
      ['limit=2.5', 'limit', 'int_parsing'],
      ['limit=1&limit=2', 'limit', 'string_type'],
      ['cursor=not-a-cursor', 'cursor', 'cursor_format'],
      [
        `cursor=${encodeCursor({ at: new Date(), id: '0b6f5a52-3c1e-4f0e-9a57-2b1d8c9e7f10' })}x`,
        'cursor',
        'cursor_format',
      ],
    ])('answers 422 for ?%s', async (query, field, type) => {
      const response = await app.call('GET', `/v1/agents/me/payments?${query}`, {
        headers: await historyHeaders(app, newWallet()),
      });
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        expect.objectContaining({ loc: ['query', field], type, msg: expect.any(String) }),
      ]);
    });

    it('reports a bad limit and a bad cursor together', async () => {
      const response = await app.call('GET', '/v1/agents/me/payments?limit=0&cursor=%%%', {
        headers: await historyHeaders(app, newWallet()),
      });
      expect(response.status).toBe(422);
      expect(response.body.detail.map((item: { loc: unknown }) => item.loc)).toEqual([
        ['query', 'limit'],
        ['query', 'cursor'],
      ]);
    });
  });

  it('describes both routes in the OpenAPI document, with the wallet credential and the history’s proof', async () => {
    const paths = (await app.call('GET', '/v1/openapi.json')).body.paths;
    expect(paths['/v1/agents/me'].get.security).toEqual([{ wallet: [] }]);
    expect(paths['/v1/agents/me/payments'].get.security).toEqual([{ wallet: [], 'wallet-proof': [] }]);
    expect(paths['/v1/agents/me/payments'].get.responses['401'].description).toMatch(
      /X-Wallet-Address.*X-Wallet-Proof/,
    );
    expect(paths['/v1/agents/me/payments'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'cursor']),
    );
  });
});
