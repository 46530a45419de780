/*
 * POST /v1/access-tokens/siwx over HTTP, on the local chain: a wallet that paid for a path gets that
 * payment's token again, once per challenge; every other proof is refused with a detail, by the
 * check meant for it. Proofs come from @x402/extensions' client (createSIWxPayload), challenges
 * from core as the middleware mints them.
 */

import {
  ACCESS_TOKEN_CLOCK_SKEW_SECONDS,
  requestPath,
  signSiwxNonce,
  siwxDeclaration,
  transferProofMessage,
  USDC_ABI,
  type SiwxChallengeTerms,
} from '@crawlgate/core';
import { devTestClient, testWalletAbi } from '@crawlgate/devchain';
import { createSIWxPayload, encodeSIWxHeader, formatSIWEMessage } from '@x402/extensions/sign-in-with-x';
import { encodeFunctionData, serializeErc6492Signature } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { deployTestWallet, fundUsdc, newWallet, signPayment, walletOf } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import {
  SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER,
  SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH,
  SIGN_INS_PER_VISITOR,
} from '../rate-limit/limits';

describe('POST /v1/access-tokens/siwx', () => {
  let app: TestApp;
  let site: TestSite;
  let otherSite: TestSite;
  // Its key signs each publisher's proof: several publishers here name this one address.
  const payee = newWallet();
  const payTo = payee.address;
  const agent = newWallet();
  /** The token POST /v1/gates/{id}/verify gave for /articles/paid. */
  let paidToken: { access_token: string; expires_at: string };

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site } = await pricedSite(app, payee));
    ({ site: otherSite } = await pricedSite(app, payee));
    await fundUsdc(app, agent.address, '1');
    const gate = await openGate(app, site, '/articles/paid');
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, agent, gate) },
    });
    expect(paid.status).toBe(200);
    paidToken = paid.body;
  }, 60_000);
  afterAll(() => app?.close());

  const now = () => Math.floor(Date.now() / 1000);
  const terms = (
    path: string,
    overrides: Partial<SiwxChallengeTerms> & { secret?: string; siteId?: string } = {},
  ): SiwxChallengeTerms => {
    const exp = overrides.exp ?? now() + 300;
    const nonce =
      overrides.nonce ??
      signSiwxNonce({ siteId: overrides.siteId ?? site.siteId, path }, exp, overrides.secret ?? site.secret);
    return { domain: site.domain, path, caip2: `eip155:${app.chain.chainId}`, nonce, exp, ...overrides };
  };
  const prove = async (challenge: SiwxChallengeTerms, wallet: PrivateKeyAccount = agent) => {
    const { info, supportedChains } = siwxDeclaration(challenge);
    return encodeSIWxHeader(await createSIWxPayload({ ...info, ...supportedChains[0] }, wallet, info.uri));
  };
  /** A stranger's signature of the challenge for `path` (or `signature`), under the payer's public address. */
  const posingAsPayer = async (path = '/articles/paid', signature?: `0x${string}`) => {
    const { info, supportedChains } = siwxDeclaration(terms(path));
    return encodeSIWxHeader({
      ...(await createSIWxPayload({ ...info, ...supportedChains[0] }, newWallet(), info.uri)),
      address: agent.address,
      ...(signature === undefined ? {} : { signature }),
    });
  };
  /** `signer`'s signature of a fresh challenge for `path` on `on`, under `address` (its own, or one it poses as). */
  const proofOn = async (on: TestSite, signer: PrivateKeyAccount, address: string, path = '/articles/paid') => {
    const exp = now() + 300;
    const { info, supportedChains } = siwxDeclaration({
      domain: on.domain,
      path,
      caip2: `eip155:${app.chain.chainId}`,
      nonce: signSiwxNonce({ siteId: on.siteId, path }, exp, on.secret),
      exp,
    });
    const complete = { ...info, ...supportedChains[0] };
    const signature = await signer.signMessage({ message: formatSIWEMessage(complete, address) });
    return encodeSIWxHeader({ ...complete, address, signature });
  };
  /** The statuses of `count` strangers' proofs on `on`, each under the address `posingAs` picks, each from another visitor. */
  const strangersAsking = async (on: TestSite, count: number, posingAs: () => string) => {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const proof = await proofOn(on, newWallet(), posingAs());
      const visitor = `198.19.${Math.floor(i / 250)}.${(i % 250) + 1}`;
      statuses.push((await ask(proof, '/articles/paid', on.siteToken, visitor)).status);
    }
    return statuses;
  };
  const ask = (proof: unknown, url: unknown = '/articles/paid', siteToken = site.siteToken, client?: string) =>
    app.call('POST', '/v1/access-tokens/siwx', {
      body: { proof, url, ...(client === undefined ? {} : { client_ip: client }) },
      headers: { 'x-site-token': siteToken },
    });

  it("answers the payer's proof with the payment's own token (same expiry), once", async () => {
    const proof = await prove(terms('/articles/paid'));
    const answer = await ask(proof);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      access_token: paidToken.access_token,
      expires_at: paidToken.expires_at,
      url: '/articles/paid',
      payer: agent.address.toLowerCase(),
    });
    const replay = await ask(proof);
    expect(replay).toMatchObject({ status: 409, body: { detail: expect.stringMatching(/already used/) } });
  });

  it.each(['/caf%C3%A9', '/a%20b', '/a%22b', '/%E6%97%A5%E6%9C%AC', '/caf%C3%A9/%3F'])(
    "answers the payer's proof for a path requestPath() decodes (%s as requested): its URI percent-encoded",
    async (requested) => {
      // The middleware binds (and forwards) the decoded path, "/café"; the message names a URI.
      const path = requestPath(requested);
      const gate = await openGate(app, site, requested);
      const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
        body: { payment: await signPayment(app, agent, gate) },
      });
      expect(paid.status).toBe(200);
      const challenge = terms(path);
      expect(siwxDeclaration(challenge).info.uri).toBe(`https://${site.domain}${requested}`);
      const answer = await ask(await prove(challenge), path);
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 200,
        body: expect.objectContaining({ access_token: paid.body.access_token, url: path }),
      });
    },
  );

  it('forgets a spent nonce once it expired longer ago than the clocks’ allowed skew, by the database’s clock', async () => {
    const spent = (nonce: string, expiredSecondsAgo: number) =>
      app.database.prisma.$executeRaw`INSERT INTO siwx_nonces (nonce, site_id, expires_at)
        VALUES (${nonce}, ${site.siteId}::uuid, now() - ${expiredSecondsAgo} * interval '1 second')`;
    await spent('spent-long-ago', ACCESS_TOKEN_CLOCK_SKEW_SECONDS + 60);
    await spent('spent-within-skew', ACCESS_TOKEN_CLOCK_SKEW_SECONDS - 60);
    expect((await ask(await prove(terms('/articles/paid')))).status).toBe(200); // spends one: the purge runs
    const left = await app.database.prisma.siwxNonce.findMany({
      where: { nonce: { in: ['spent-long-ago', 'spent-within-skew'] } },
    });
    expect(left.map((row) => row.nonce)).toEqual(['spent-within-skew']);
  });

  it('lets one of ten concurrent uses of a proof through', async () => {
    const proof = await prove(terms('/articles/paid'));
    const statuses = (await Promise.all(Array.from({ length: 10 }, () => ask(proof)))).map((answer) => answer.status);
    expect(statuses.sort()).toEqual([200, ...Array(9).fill(409)]);
  });

  it('refuses a nonce not this site’s for this path, forged, expired or lasting years: 401', async () => {
    const cases: [SiwxChallengeTerms, RegExp][] = [
      [terms('/articles/paid', { nonce: 'f'.repeat(108) }), /not issued/],
      [terms('/articles/paid', { secret: 'cgsec_not_the_sites' }), /not issued/],
      [terms('/articles/paid', { secret: otherSite.secret, siteId: otherSite.siteId }), /not issued/],
      [{ ...terms('/articles/other'), path: '/articles/paid' }, /not issued/],
      [terms('/articles/paid', { exp: now() - 1 }), /expired/],
      // The site's own nonce, but for years: a spent one would keep its row as long.
      [terms('/articles/paid', { exp: now() + 10 * 365 * 86_400 }), /outlives/],
    ];
    for (const [challenge, detail] of cases) {
      const answer = await ask(await prove(challenge));
      expect({ status: answer.status, detail: answer.body.detail }).toEqual({
        status: 401,
        detail: expect.stringMatching(detail),
      });
    }
  });

  it('refuses a proof for another domain, URI or chain, or signed over another message: 401', async () => {
    const challenge = terms('/articles/paid');
    const { info, supportedChains } = siwxDeclaration(challenge);
    const complete = { ...info, ...supportedChains[0] };
    const signedOver = async (edit: Partial<typeof complete>, claim: Partial<typeof complete> = edit) => {
      const signature = await agent.signMessage({
        message: formatSIWEMessage({ ...complete, ...edit }, agent.address),
      });
      return encodeSIWxHeader({ ...complete, ...claim, address: agent.address, signature });
    };
    for (const proof of [
      await signedOver({ domain: 'evil.example.com' }),
      await signedOver({ uri: `https://${site.domain}/articles/other` }),
      await signedOver({ chainId: 'eip155:1' }),
      // Signed over another expiry or statement while claiming the challenge's fields.
      await signedOver({ expirationTime: new Date(Date.now() + 86_400_000).toISOString() }, {}),
      await signedOver({ statement: 'Something else' }, {}),
    ]) {
      expect(await ask(proof)).toMatchObject({ status: 401, body: { detail: expect.any(String) } });
    }
  });

  it("refuses another wallet's signature under the payer's address: 401; a wallet that never paid, or a path not paid: 402", async () => {
    const stranger = newWallet();
    expect(await ask(await posingAsPayer())).toMatchObject({
      status: 401,
      body: { detail: expect.stringMatching(/signature/) },
    });
    // Junk in the wrappers viem parses (ERC-8010, ERC-6492) is no signature either: 401, not "retry later".
    for (const junk of [
      `0x${'00'.repeat(40)}${'8010'.repeat(16)}`,
      `0x${'ab'.repeat(10)}${'6492'.repeat(16)}`,
    ] as const)
      expect(await ask(await posingAsPayer('/articles/paid', junk))).toMatchObject({
        status: 401,
        body: { detail: expect.stringMatching(/signature/) },
      });
    expect(await ask(await prove(terms('/articles/paid'), stranger))).toMatchObject({
      status: 402,
      body: { detail: expect.stringMatching(/no payment/) },
    });
    expect(await ask(await prove(terms('/articles/unpaid')), '/articles/unpaid')).toMatchObject({
      status: 402,
      body: { detail: expect.stringMatching(/no payment/) },
    });
  });

  it('refuses once the paid token has expired: 402 (access never outlasts the payment)', async () => {
    const gate = await openGate(app, site, '/articles/lapsed');
    expect(
      (
        await app.call('POST', `/v1/gates/${gate.id}/verify`, {
          body: { payment: await signPayment(app, agent, gate) },
        })
      ).status,
    ).toBe(200);
    const proof = await prove(terms('/articles/lapsed'));
    await app.database.prisma.payment.updateMany({
      where: { siteId: site.siteId, url: '/articles/lapsed' },
      data: { tokenExpiresAt: new Date(Date.now() - 1000) },
    });
    expect(await ask(proof, '/articles/lapsed')).toMatchObject({ status: 402 });
  });

  it('is the site token’s site only: 401 without it, another site’s token judges by its own secret', async () => {
    const proof = await prove(terms('/articles/paid'));
    expect((await app.call('POST', '/v1/access-tokens/siwx', { body: { proof, url: '/articles/paid' } })).status).toBe(
      401,
    );
    expect(await ask(proof, '/articles/paid', otherSite.siteToken)).toMatchObject({
      status: 401,
      body: { detail: expect.stringMatching(/not issued/) },
    });
    // Not spent by those attempts.
    expect((await ask(proof)).status).toBe(200);
  });

  it('answers bad input with a detail: 400 for what is no proof, 422 for a bad body', async () => {
    for (const proof of ['', 'not base64!', Buffer.from('{"address":"0x1"}').toString('base64')]) {
      expect(await ask(proof)).toMatchObject({ status: 400, body: { detail: expect.any(String) } });
    }
    for (const [proof, url] of [
      [undefined, '/articles/paid'],
      [42, '/articles/paid'],
      ['x', 'articles/paid'],
      ['x', null],
      ['x'.repeat(9000), '/articles/paid'],
    ]) {
      expect(await ask(proof, url)).toMatchObject({ status: 422, body: { detail: expect.any(Array) } });
    }
  });

  /** A smart wallet (ERC-1271) of a fresh owner that paid `path` on `paidSite` by a transfer it proved. */
  async function paidBySmartWallet(paidSite: TestSite, path: string) {
    const owner = newWallet();
    const smartWallet = await deployTestWallet(app, owner);
    const gate = await openGate(app, paidSite, path);
    const transfer = encodeFunctionData({ abi: USDC_ABI, functionName: 'transfer', args: [payTo, 10_000n] });
    const hash = await walletOf(app, owner).writeContract({
      address: smartWallet,
      abi: testWalletAbi,
      functionName: 'execute',
      args: [app.chain.usdc, transfer],
    } as never);
    await app.chain.publicClient.waitForTransactionReceipt({ hash });
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { tx_hash: hash, signature: await owner.signMessage({ message: transferProofMessage(gate.ref, hash) }) },
    });
    expect(paid.status).toBe(200);
    return { owner, smartWallet, paid };
  }

  it("takes a smart wallet's ERC-1271 signature (its owner's key), not a stranger's", async () => {
    const { owner, smartWallet, paid } = await paidBySmartWallet(site, '/articles/smart');

    const signedFor = async (signer: PrivateKeyAccount) => {
      const { info, supportedChains } = siwxDeclaration(terms('/articles/smart'));
      const complete = { ...info, ...supportedChains[0] };
      const signature = await signer.signMessage({ message: formatSIWEMessage(complete, smartWallet) });
      return encodeSIWxHeader({ ...complete, address: smartWallet, signature });
    };
    expect(await ask(await signedFor(newWallet()), '/articles/smart')).toMatchObject({ status: 401 });
    expect(await ask(await signedFor(owner), '/articles/smart')).toMatchObject({
      status: 200,
      body: { access_token: paid.body.access_token, payer: smartWallet.toLowerCase() },
    });
  });

  it('keeps a budget per wallet: proofs of other wallets, or posing as a payer, never hold off a payer who signs', async () => {
    // Anyone can answer any 402's challenge with a proof of a fresh wallet, or under a payer's
    // public address. Counted per site, 100 a minute of those answered every real payer 429.
    const second = newWallet();
    await fundUsdc(app, second.address, '1');
    const gate = await openGate(app, site, '/articles/paid');
    expect(
      (
        await app.call('POST', `/v1/gates/${gate.id}/verify`, {
          body: { payment: await signPayment(app, second, gate) },
        })
      ).status,
    ).toBe(200);
    const strangers = await Promise.all(Array.from({ length: 110 }, () => prove(terms('/articles/paid'), newWallet())));
    const answered = await Promise.all(strangers.map((proof) => ask(proof)));
    expect(new Set(answered.map((answer) => answer.status))).toEqual(new Set([402]));
    expect((await ask(await prove(terms('/articles/paid')))).status).toBe(200);

    // Posing as the first payer, signed by someone else: only that payer's budget is spent.
    const posing = await posingAsPayer();
    const posed = await Promise.all(Array.from({ length: 110 }, () => ask(posing)));
    expect(posed.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
    expect((await ask(await prove(terms('/articles/paid'), second))).status).toBe(200);
  });

  it('counts sign-ins per visitor when the middleware names it: proofs posing as a payer from elsewhere never hold it off', async () => {
    const posing = await posingAsPayer();
    const posed = await Promise.all(
      Array.from({ length: 110 }, () => ask(posing, '/articles/paid', site.siteToken, '198.51.100.7')),
    );
    expect(posed.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
    const own = await ask(await prove(terms('/articles/paid')), '/articles/paid', site.siteToken, '203.0.113.9');
    expect(own.status).toBe(200);
    const fresh = await prove(terms('/articles/paid'), newWallet());
    expect((await ask(fresh, '/articles/paid', site.siteToken, 'not an address')).status).toBe(422);
  });

  it('holds one visitor to SIGN_INS_PER_VISITOR across every wallet its proofs name; per site when the middleware names none', async () => {
    // The wallet is the proof's pick: per wallet alone, a fresh one per proof was a fresh bucket each time.
    const { site: visited } = await pricedSite(app, payee);
    const freshWalletProof = () =>
      prove(
        terms('/articles/paid', { domain: visited.domain, siteId: visited.siteId, secret: visited.secret }),
        newWallet(),
      );
    const { limit } = SIGN_INS_PER_VISITOR;
    const signIns = async (count: number, client?: string) => {
      const proofs = await Promise.all(Array.from({ length: count }, freshWalletProof));
      const statuses: number[] = [];
      for (const proof of proofs) statuses.push((await ask(proof, '/articles/paid', visited.siteToken, client)).status);
      return statuses;
    };
    expect(await signIns(limit, '203.0.113.9')).toEqual(Array(limit).fill(402));
    const over = await ask(await freshWalletProof(), '/articles/paid', visited.siteToken, '203.0.113.9');
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another visitor of the site is not held off.
    expect(await signIns(1, '203.0.113.10')).toEqual([402]);
    // Named by no middleware: the site's sign-ins share one such budget.
    expect(await signIns(limit - 1)).toEqual(Array(limit - 1).fill(402));
    expect(await signIns(2)).toEqual([402, 429]);
  }, 120_000);

  /** A fresh publisher's site, and an EOA that paid its /articles/paid. */
  async function shopWithPayer() {
    const { site: shop } = await pricedSite(app, payee);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const gate = await openGate(app, shop, '/articles/paid');
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, payer, gate) },
    });
    expect(paid.status).toBe(200);
    return { shop, payer };
  }

  it('answers strangers posing under a wallet alike whether it paid for the path or not: what it bought stays its own', async () => {
    // The payment was looked up first: posing under a payer went on to the chain's check and its
    // budget (429 after ten, the middleware's 503), posing under anyone else stopped at "no payment"
    // (402): a few probes told which paths a public address had bought.
    const { shop, payer } = await shopWithPayer();
    const { limit } = SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH;
    // The middleware answers a refusal (401 or 402 here) with its 402, and a 429 with its 503.
    const asTheVisitorSees = (statuses: number[]) => statuses.map((status) => (status === 429 ? 503 : 402));
    const bought = await strangersAsking(shop, limit + 1, () => payer.address);
    const neverPaid = newWallet().address;
    expect(asTheVisitorSees(await strangersAsking(shop, limit + 1, () => neverPaid))).toEqual(asTheVisitorSees(bought));
    expect(bought).toEqual([...Array(limit).fill(401), 429]);
    // Its own signature is answered as before.
    expect((await ask(await proofOn(shop, payer, payer.address), '/articles/paid', shop.siteToken)).status).toBe(200);
  }, 60_000);

  it('answers a stranger’s wrapped proof (ERC-6492, ERC-8010) 401 before any payment is read: its factory is the stranger’s code', async () => {
    // A wrapper naming a "factory" that reverts with 1 MB made the check of a payer's unreadable
    // (503) and a non-payer's a 402: one probe told a page bought, at the node's cost.
    const { shop, payer } = await shopWithPayer();
    const bomb = newWallet().address;
    await devTestClient(app.chain.rpcUrl).setCode({ address: bomb, bytecode: '0x621000006000fd' });
    const wrapped = async (address: string) => {
      const junk = await newWallet().signMessage({ message: 'anything' });
      const signature = serializeErc6492Signature({ address: bomb, data: '0x', signature: junk });
      const { info, supportedChains } = siwxDeclaration({
        domain: shop.domain,
        path: '/articles/paid',
        caip2: `eip155:${app.chain.chainId}`,
        nonce: signSiwxNonce({ siteId: shop.siteId, path: '/articles/paid' }, now() + 300, shop.secret),
        exp: now() + 300,
      });
      const proof = encodeSIWxHeader({ ...info, ...supportedChains[0], address, signature });
      return (await ask(proof, '/articles/paid', shop.siteToken)).status;
    };
    expect([await wrapped(payer.address), await wrapped(newWallet().address)]).toEqual([401, 401]);
  }, 60_000);

  it(`asks the chain for at most SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER sign-ins a minute across a publisher's sites, counted before any payment is read`, async () => {
    // A site token's holder names any visitor: without it, proofs under fresh wallets had the node
    // read code without end.
    const { site: crowded } = await pricedSite(app, payee);
    const { limit } = SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER;
    const statuses = await strangersAsking(crowded, limit + 1, () => newWallet().address);
    expect(statuses).toEqual([...Array(limit).fill(401), 429]);
  }, 120_000);

  it('asks the chain only for a payer of the path: a smart wallet that never paid is answered 402 page after page, and junk holds off no one', async () => {
    // Checked before the payment, a smart wallet's own sign-in on each new page spent the chain's
    // budget: past ten pages a minute it got 429 (the middleware's 503), and never paid.
    const { site: shop } = await pricedSite(app, payee);
    const owner = newWallet();
    const smart = await deployTestWallet(app, owner);
    const pages = Array.from(
      { length: SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH.limit + 5 },
      (_, i) => `/articles/new-${i}`,
    );
    const unpaid: number[] = [];
    for (const page of pages)
      unpaid.push((await ask(await proofOn(shop, owner, smart, page), page, shop.siteToken)).status);
    expect(unpaid).toEqual(pages.map(() => 402));
    // Junk under a fresh wallet each (no code: an EOA signs only as itself): refused before any payment is read.
    expect(new Set(await strangersAsking(shop, 120, () => newWallet().address))).toEqual(new Set([401]));
    const payer = await paidBySmartWallet(shop, '/articles/paid');
    expect(
      (await ask(await proofOn(shop, payer.owner, payer.smartWallet), '/articles/paid', shop.siteToken)).status,
    ).toBe(200);
  }, 120_000);

  it('asks the chain for at most SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH sign-ins a minute per wallet and path on a site; other payers are not held off', async () => {
    // Proofs posing under a smart-wallet payer's public address, each from another visitor: every one
    // reaches the chain's signature check. Counted per wallet, they end in 429.
    const { site: busy } = await pricedSite(app, payee);
    const smart = await paidBySmartWallet(busy, '/articles/paid');
    const other = await paidBySmartWallet(busy, '/articles/paid');
    const eoaPayer = newWallet();
    await fundUsdc(app, eoaPayer.address, '1');
    const gate = await openGate(app, busy, '/articles/paid');
    expect(
      (
        await app.call('POST', `/v1/gates/${gate.id}/verify`, {
          body: { payment: await signPayment(app, eoaPayer, gate) },
        })
      ).status,
    ).toBe(200);
    const proofFor = (signer: PrivateKeyAccount, address: string) => proofOn(busy, signer, address);
    const posing = await proofFor(newWallet(), smart.smartWallet);
    const { limit } = SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH;
    const statuses = (
      await Promise.all(
        Array.from({ length: limit }, (_, i) => ask(posing, '/articles/paid', busy.siteToken, `198.18.0.${i + 1}`)),
      )
    ).map((answer) => answer.status);
    expect(statuses).toEqual(Array(limit).fill(401));
    const over = await ask(posing, '/articles/paid', busy.siteToken, '198.18.1.1');
    expect(over).toMatchObject({ status: 429, body: { detail: expect.stringMatching(/chain/) } });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another smart-wallet payer's checks are its own: its owner still signs in.
    expect((await ask(await proofFor(other.owner, other.smartWallet), '/articles/paid', busy.siteToken)).status).toBe(
      200,
    );
    // An EOA payer has no code: a stranger's proofs for it cost a code read, never a verification,
    // and count as the others; the payer's own signature is recovered locally and still answered.
    const eoaPosing = await proofFor(newWallet(), eoaPayer.address);
    const eoaStatuses = (
      await Promise.all(
        Array.from({ length: limit + 1 }, (_, i) =>
          ask(eoaPosing, '/articles/paid', busy.siteToken, `198.18.2.${i + 1}`),
        ),
      )
    ).map((answer) => answer.status);
    expect([...eoaStatuses].sort()).toEqual([...Array(limit).fill(401), 429]);
    expect((await ask(await proofFor(eoaPayer, eoaPayer.address), '/articles/paid', busy.siteToken)).status).toBe(200);
  }, 60_000);
});
