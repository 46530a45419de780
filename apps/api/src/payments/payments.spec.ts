import {
  ACCESS_TOKEN_TTL_SECONDS,
  exactPaymentV1,
  peekAccessTokenPayload,
  signAccessToken,
  transferProofMessage,
  USDC_ABI,
  readGate,
  signGate,
  verifyAccessToken,
} from '@crawlgate/core';
import {
  buildAuthorization,
  signAuthorization,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  testBundlerAbi,
  testBundlerBytecode,
  testUsdcAbi,
  testUsdcBytecode,
  testWalletAbi,
  testWalletBytecode,
  usdcDomain,
} from '@crawlgate/devchain';
import {
  createPublicClient,
  encodeFunctionData,
  hashTypedData,
  http,
  parseSignature,
  serializeCompactSignature,
  serializeSignature,
  signatureToCompactSignature,
  type Hex,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { freshIp, openGate, pricedSite, pricedSiteOf, type TestSite } from '../../test/fixtures';
import {
  DEFAULT_LIMIT,
  REFUSED_SIMULATIONS_PER_PUBLISHER,
  REFUSED_SIMULATIONS_PER_SITE,
  SIMULATIONS_IN_FLIGHT_PER_PAYER,
  SIMULATIONS_IN_FLIGHT_PER_SITE,
} from '../rate-limit/limits';
import {
  deployTestWallet,
  fundEth,
  fundUsdc,
  newWallet,
  sendAuthorizationAsStranger,
  sendAuthorizationsBundled,
  sendUsdc,
  signOffer,
  signPayment,
  transfersTo,
  usdcBalance,
  walletOf,
} from '../../test/test-agent';
import { pausedAt } from '../../test/pause-at';
import { freePort } from '../../test/free-port';
import { startTestApp, type TestApp } from '../../test/test-app';
import { PaymentStore } from './payment.store';
import { PaymentsService } from './payments.service';
import { RelayRefusalsStore } from './relay-refusals.store';

describe('paying a gate', () => {
  let app: TestApp;
  let site: TestSite;
  // Its key signs each publisher's proof: several publishers here name this one address.
  const payee = newWallet();
  const payTo = payee.address;
  const agent = newWallet();

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site } = await pricedSite(app, payee));
    await fundUsdc(app, agent.address, '5');
  });
  afterAll(() => app.close());

  const verify = (gateId: string, body: unknown) => app.call('POST', `/v1/gates/${gateId}/verify`, { body });
  const checkToken = (token: string, url?: string, siteToken = site.siteToken) =>
    app.call('POST', '/v1/access-tokens/verify', {
      body: { token, ...(url ? { url } : {}) },
      headers: { 'x-site-token': siteToken },
    });

  /** A copy of an x402 payment with some authorization fields changed after it was signed. */
  const withAuthorization = (payment: any, fields: Record<string, string>) => ({
    ...payment,
    payload: { ...payment.payload, authorization: { ...payment.payload.authorization, ...fields } },
  });
  const withSignature = (payment: any, change: (signature: Hex) => Hex) => ({
    ...payment,
    payload: { ...payment.payload, signature: change(payment.payload.signature) },
  });
  /** The same payer's signature over the same authorization, but for another token's EIP-712 domain. */
  const signForOtherToken = async (gate: any) => {
    const { authorization } = await signOffer(app, agent, gate);
    const signature = await signAuthorization(agent, usdcDomain(app.chain.chainId, newWallet().address), authorization);
    return exactPaymentV1(gate.accepts[0].network, authorization, signature);
  };

  describe('with an EIP-3009 authorization (x402 "exact")', () => {
    it('settles on chain first, then answers 200 with a token that verifies', async () => {
      const gate = await openGate(app, site, '/article/paid');
      const agentBefore = await usdcBalance(app, agent.address);
      const payToBefore = await usdcBalance(app, payTo);

      const paid = await verify(gate.id, { payment: await signPayment(app, agent, gate) });
      expect(paid.status).toBe(200);
      expect(paid.headers.get('cache-control')).toBe('no-store');
      expect(paid.body).toEqual({
        status: 'paid',
        access_token: expect.stringMatching(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
        expires_at: expect.any(String),
        gate_id: gate.id,
        url: '/article/paid',
        tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        payer: agent.address.toLowerCase(),
        amount: '10000',
        price_usd: '0.01',
        network: 'local',
      });
      const lifetime = Date.parse(paid.body.expires_at) - Date.now();
      expect(lifetime).toBeGreaterThan(29 * 60_000);
      expect(lifetime).toBeLessThanOrEqual(30 * 60_000);

      expect(await usdcBalance(app, agent.address)).toBe(agentBefore - 10_000n);
      expect(await usdcBalance(app, payTo)).toBe(payToBefore + 10_000n);
      const receipt = await app.chain.publicClient.getTransactionReceipt({ hash: paid.body.tx_hash });
      expect(receipt.status).toBe('success');

      expect((await checkToken(paid.body.access_token)).body).toEqual({
        valid: true,
        gate_id: gate.ref,
        url: '/article/paid',
        exp: expect.any(Number),
      });
      expect((await checkToken(paid.body.access_token, '/article/paid?x=1')).body.valid).toBe(true);
      expect((await app.call('GET', `/v1/gates/${gate.id}`)).body).toMatchObject({
        status: 'paid',
        tx_hash: paid.body.tx_hash,
        paid_at: expect.any(String),
      });
    });

    it('is idempotent: the same proof again returns the same token and moves no money', async () => {
      const gate = await openGate(app, site, '/article/twice');
      const payment = await signPayment(app, agent, gate);
      const first = await verify(gate.id, { payment });
      const second = await verify(gate.id, { payment });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      const transfers = (await transfersTo(app, payTo)).filter((t) => t.hash === first.body.tx_hash);
      expect(transfers).toHaveLength(1);
    });

    it('settles once under 20 concurrent verifies of one gate', async () => {
      const gate = await openGate(app, site, '/article/rush');
      const payment = await signPayment(app, agent, gate);
      const before = (await transfersTo(app, payTo)).length;
      const answers = await Promise.all(Array.from({ length: 20 }, () => verify(gate.id, { payment })));
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
      const tokens = new Set(
        answers.filter((answer) => answer.status === 200).map((answer) => answer.body.access_token),
      );
      expect(tokens.size).toBe(1);
      expect((await transfersTo(app, payTo)).length).toBe(before + 1);
    });

    it('refuses a proof already used for another gate with 409', async () => {
      const first = await openGate(app, site, '/article/one');
      const second = await openGate(app, site, '/article/two');
      const payment = await signPayment(app, agent, first);
      expect((await verify(first.id, { payment })).status).toBe(200);
      const replay = await verify(second.id, { payment });
      expect(replay.status).toBe(409);
      expect(replay.body.detail).toMatch(/another gate/);
      expect((await app.call('GET', `/v1/gates/${second.id}`)).body.status).toBe('open');
    });

    it('takes no authorization from the gate’s own pay_to: a transfer to itself pays the publisher nothing', async () => {
      // Whoever holds the payout key (a wallet since replaced, and lost with its key) would read for gas alone.
      await fundUsdc(app, payTo, '1');
      const gate = await openGate(app, site, '/reject/from-pay-to');
      const before = await usdcBalance(app, payTo);
      const response = await verify(gate.id, { payment: await signPayment(app, payee, gate) });
      expect(response).toMatchObject({
        status: 402,
        body: { reason: 'invalid_exact_evm_payload_recipient_mismatch', detail: expect.stringMatching(/itself/) },
      });
      expect(response.body.access_token).toBeUndefined();
      expect(await usdcBalance(app, payTo)).toBe(before);
      expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('open');
    });

    it('refuses a second, different proof for a gate already paid with 409', async () => {
      const gate = await openGate(app, site, '/article/paid-once');
      expect((await verify(gate.id, { payment: await signPayment(app, agent, gate) })).status).toBe(200);
      const again = await verify(gate.id, { payment: await signPayment(app, agent, gate) });
      expect(again.status).toBe(409);
    });

    describe('rejects with 402 {detail, reason} and charges nothing', () => {
      const now = () => BigInt(Math.floor(Date.now() / 1000));
      const cases: [string, (gate: any) => Promise<unknown>, string][] = [
        [
          'the wrong recipient',
          (gate) => signPayment(app, agent, gate, { to: newWallet().address }),
          'invalid_exact_evm_payload_recipient_mismatch',
        ],
        [
          'the wrong amount',
          (gate) => signPayment(app, agent, gate, { value: 9_999n }),
          'invalid_exact_evm_payload_authorization_value',
        ],
        [
          'an expired window',
          (gate) => signPayment(app, agent, gate, { validBefore: now() - 1n }),
          'invalid_exact_evm_payload_authorization_valid_before',
        ],
        [
          'a window closing within 6 s',
          (gate) => signPayment(app, agent, gate, { validBefore: now() + 3n }),
          'invalid_exact_evm_payload_authorization_valid_before',
        ],
        [
          'a window open for ever (validBefore 2^255)',
          (gate) => signPayment(app, agent, gate, { validBefore: 2n ** 255n }),
          'invalid_exact_evm_payload_authorization_valid_before',
        ],
        [
          'a window open longer than 300 s and the clock skew',
          (gate) => signPayment(app, agent, gate, { validBefore: now() + 300n + 120n }),
          'invalid_exact_evm_payload_authorization_valid_before',
        ],
        [
          'a window not open yet',
          (gate) => signPayment(app, agent, gate, { validAfter: now() + 120n }),
          'invalid_exact_evm_payload_authorization_valid_after',
        ],
        [
          'a signature by someone else',
          (gate) => signPayment(app, agent, gate, { signer: newWallet() }),
          'invalid_exact_evm_payload_signature',
        ],
        ['another network', (gate) => signPayment(app, agent, gate, { network: 'base' }), 'invalid_network'],
        // The token itself judges the signature when the settlement is simulated: these reach it.
        [
          'a nonce swapped after signing',
          async (gate) => withAuthorization(await signPayment(app, agent, gate), { nonce: `0x${'ab'.repeat(32)}` }),
          'invalid_exact_evm_payload_signature',
        ],
        [
          'validBefore moved after signing',
          async (gate) => withAuthorization(await signPayment(app, agent, gate), { validBefore: String(now() + 200n) }),
          'invalid_exact_evm_payload_signature',
        ],
        [
          'the malleable (high-s) twin of a valid signature',
          async (gate) => withSignature(await signPayment(app, agent, gate), highSTwin),
          'invalid_exact_evm_payload_signature',
        ],
        [
          'a signature by the payer for another token',
          async (gate) => signForOtherToken(gate),
          'invalid_exact_evm_payload_signature',
        ],
        [
          'a signature of zeros',
          async (gate) => withSignature(await signPayment(app, agent, gate), () => `0x${'00'.repeat(65)}`),
          'invalid_exact_evm_payload_signature',
        ],
        ['an insufficient balance', (gate) => signPayment(app, newWallet(), gate), 'insufficient_funds'],
      ];
      it.each(cases)('%s', async (_, sign, reason) => {
        const gate = await openGate(app, site, `/reject/${reason}`);
        const before = await usdcBalance(app, payTo);
        const response = await verify(gate.id, { payment: await sign(gate) });
        expect(response.status).toBe(402);
        expect(response.body).toEqual({ detail: expect.any(String), reason });
        expect(await usdcBalance(app, payTo)).toBe(before);
        expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('open');
      });

      it('says why a window too long is refused, and takes one of the longest allowed', async () => {
        const tooLong = await openGate(app, site, '/reject/long-window');
        const refused = await verify(tooLong.id, {
          payment: await signPayment(app, agent, tooLong, { validBefore: 2n ** 255n }),
        });
        expect(refused.body.detail).toMatch(/at most 300 s/);
        const longest = await openGate(app, site, '/accept/longest-window');
        const paid = await verify(longest.id, {
          payment: await signPayment(app, agent, longest, { validBefore: now() + 300n }),
        });
        expect(paid.status === 200 ? 200 : paid).toBe(200);
      });

      it('a malformed payload', async () => {
        const gate = await openGate(app, site, '/reject/malformed');
        const response = await verify(gate.id, {
          payment: { x402Version: 1, scheme: 'exact', network: 'local', payload: { signature: 'nope' } },
        });
        expect(response).toMatchObject({ status: 402, body: { reason: 'invalid_payload' } });
      });

      it('a nonce the agent already used on chain', async () => {
        const gate = await openGate(app, site, '/reject/nonce');
        const payment = await signPayment(app, agent, gate);
        const hash = await sendAuthorizationAsStranger(app, payment);
        await app.chain.publicClient.waitForTransactionReceipt({ hash });
        const response = await verify(gate.id, { payment });
        expect(response).toMatchObject({ status: 402, body: { reason: 'invalid_exact_evm_nonce_already_used' } });
      });
    });

    it('settles a smart wallet’s ERC-1271 authorization, and refuses one its signer did not sign', async () => {
      const owner = newWallet();
      await fundEth(app, owner.address);
      const deploy = walletOf(app, owner);
      const deployed = await deploy.deployContract({
        abi: testWalletAbi,
        bytecode: testWalletBytecode,
        args: [owner.address],
      } as never);
      const smartWallet = (await app.chain.publicClient.waitForTransactionReceipt({ hash: deployed })).contractAddress!;
      await fundUsdc(app, smartWallet, '1');
      // The wallet's isValidSignature takes its signer's ECDSA signature of the EIP-712 digest.
      const signedBy = async (signer: PrivateKeyAccount, gate: any) => {
        const authorization = buildAuthorization({
          from: smartWallet,
          to: gate.pay_to,
          value: BigInt(gate.amount),
          validForSeconds: 300,
        });
        const digest = hashTypedData({
          domain: usdcDomain(app.chain.chainId, app.chain.usdc),
          types: TRANSFER_WITH_AUTHORIZATION_TYPES,
          primaryType: 'TransferWithAuthorization',
          message: authorization,
        });
        return exactPaymentV1(gate.accepts[0].network, authorization, await signer.sign({ hash: digest }));
      };
      const forged = await openGate(app, site, '/smart-wallet/forged');
      expect((await verify(forged.id, { payment: await signedBy(newWallet(), forged) })).body).toEqual({
        detail: expect.any(String),
        reason: 'invalid_exact_evm_payload_signature',
      });
      const gate = await openGate(app, site, '/smart-wallet/paid');
      const paid = await verify(gate.id, { payment: await signedBy(owner, gate) });
      expect(paid.status === 200 ? 200 : paid).toBe(200);
      expect(paid.body.payer).toBe(smartWallet.toLowerCase());
    });

    it('answers 422 unless exactly one of payment or tx_hash is sent', async () => {
      const gate = await openGate(app, site, '/article/bad-body');
      expect((await verify(gate.id, {})).status).toBe(422);
      expect(
        (await verify(gate.id, { payment: await signPayment(app, agent, gate), tx_hash: `0x${'a'.repeat(64)}` }))
          .status,
      ).toBe(422);
      expect((await verify(gate.id, { tx_hash: '0x1234' })).body.detail[0]).toMatchObject({ loc: ['body', 'tx_hash'] });
    });

    it('with recorded_only, answers for this authorization’s payment of the gate if recorded, and starts none', async () => {
      const gate = await openGate(app, site, '/article/recorded-only');
      const payment = await signPayment(app, agent, gate);
      const transfers = (await transfersTo(app, payTo)).length;
      const unrecorded = await verify(gate.id, { payment, recorded_only: true });
      expect([unrecorded.status, unrecorded.body.reason]).toEqual([402, 'invalid_payload']);
      expect(await transfersTo(app, payTo)).toHaveLength(transfers);

      const paid = await verify(gate.id, { payment });
      expect(paid.status).toBe(200);
      const again = await verify(gate.id, { payment, recorded_only: true });
      expect([again.status, again.body.access_token]).toEqual([200, paid.body.access_token]);
      // Another authorization for the paid gate, and this one for another gate: neither is taken.
      expect(
        (await verify(gate.id, { payment: await signPayment(app, agent, gate), recorded_only: true })).status,
      ).toBe(402);
      const other = await openGate(app, site, '/article/recorded-only-other');
      expect((await verify(other.id, { payment, recorded_only: true })).status).toBe(409);
      expect(await transfersTo(app, payTo)).toHaveLength(transfers + 1);
    });

    it('answers 422 for recorded_only with a tx_hash, or that is not a boolean', async () => {
      const gate = await openGate(app, site, '/article/recorded-only-bad');
      for (const body of [
        { tx_hash: `0x${'a'.repeat(64)}`, signature: '0x1234', recorded_only: true },
        { payment: await signPayment(app, agent, gate), recorded_only: 'yes' },
      ]) {
        const answer = await verify(gate.id, body);
        expect({ status: answer.status, loc: answer.body.detail[0].loc }).toEqual({
          status: 422,
          loc: ['body', 'recorded_only'],
        });
      }
    });
  });

  describe('with the hash of a USDC transfer the agent sent', () => {
    const payer = newWallet();
    beforeAll(async () => {
      await fundUsdc(app, payer.address, '1');
      await fundEth(app, payer.address);
    });
    const wallet = () => walletOf(app, payer);
    const send = (to: `0x${string}`, value: bigint, asset: `0x${string}` = app.chain.usdc, from = payer) =>
      sendUsdc(app, from, to, value, asset);
    /** The body an agent posts: its transfer's hash and its signature binding that transfer to this gate. */
    const proof = async (gate: { ref: string }, hash: `0x${string}`, signer: PrivateKeyAccount = payer) => ({
      tx_hash: hash,
      signature: await signer.signMessage({ message: transferProofMessage(gate.ref, hash) }),
    });
    const recorded = (hash: string) => app.database.prisma.payment.count({ where: { txHash: hash.toLowerCase() } });

    it('verifies a transfer of exactly the price to pay_to, mined after the gate, signed by its payer', async () => {
      const gate = await openGate(app, site, '/tx/paid');
      const hash = await send(payTo, 10_000n);
      const body = await proof(gate, hash);
      const paid = await verify(gate.id, body);
      expect(paid.status === 200 ? 200 : paid).toBe(200); // on failure, the whole answer is shown
      expect(paid.body).toMatchObject({
        status: 'paid',
        tx_hash: hash,
        payer: payer.address.toLowerCase(),
        url: '/tx/paid',
      });
      expect((await checkToken(paid.body.access_token)).body.valid).toBe(true);
      expect((await verify(gate.id, body)).body).toEqual(paid.body);
      const other = await openGate(app, site, '/tx/other');
      expect((await verify(other.id, body)).status).toBe(409);
      expect((await verify(other.id, await proof(other, hash))).status).toBe(409);
    });

    it('gives the token of a paid transfer again only with its payer’s signature', async () => {
      const gate = await openGate(app, site, '/tx/replayed');
      const hash = await send(payTo, 10_000n);
      expect((await verify(gate.id, await proof(gate, hash))).status).toBe(200);
      for (const replay of [{ tx_hash: hash }, await proof(gate, hash, newWallet())]) {
        const response = await verify(gate.id, replay);
        expect(response).toMatchObject({
          status: 402,
          body: { reason: 'invalid_transfer_proof_signature', detail: expect.any(String) },
        });
        expect(response.body.access_token).toBeUndefined();
      }
    });

    it('pays each gate with the transfer of its own payer when one transaction carries several', async () => {
      // A relay (an ERC-4337 bundler, a batching service) sends several payers' transfers in one
      // transaction; each payer proves its own, however many others come first (payers who never
      // claim theirs). One payer's two transfers pay two gates too.
      const [first, second] = [newWallet(), newWallet()];
      const others = Array.from({ length: 5 }, () => newWallet());
      const stranger = newWallet();
      await fundEth(app, stranger.address);
      const deployed = await app.chain.publicClient.waitForTransactionReceipt({
        hash: await walletOf(app, stranger).deployContract({ abi: testBundlerAbi, bytecode: testBundlerBytecode }),
      });
      const bundler = deployed.contractAddress!;
      for (const account of [...others, first, second]) {
        await fundUsdc(app, account.address, '1');
        await fundEth(app, account.address);
        const approved = await walletOf(app, account).writeContract({
          address: app.chain.usdc,
          abi: testUsdcAbi,
          functionName: 'approve',
          args: [bundler, 10n ** 6n],
        });
        await app.chain.publicClient.waitForTransactionReceipt({ hash: approved });
      }
      const gates = await Promise.all(['a', 'b', 'c', 'd'].map((name) => openGate(app, site, `/tx/bundle-${name}`)));
      const pull = (from: PrivateKeyAccount) =>
        encodeFunctionData({ abi: testUsdcAbi, functionName: 'transferFrom', args: [from.address, payTo, 10_000n] });
      const hash = await walletOf(app, stranger).writeContract({
        address: bundler,
        abi: testBundlerAbi,
        functionName: 'callAll',
        args: [Array(8).fill(app.chain.usdc), [...others.map(pull), pull(first), pull(second), pull(first)]],
      });
      await app.chain.publicClient.waitForTransactionReceipt({ hash });

      const compact = async (gate: { ref: string }, signer: PrivateKeyAccount) => {
        const { signature } = await proof(gate, hash, signer);
        return {
          tx_hash: hash,
          signature: serializeCompactSignature(signatureToCompactSignature(parseSignature(signature))),
        };
      };
      const paid = [
        // EIP-2098's 64-byte form of the same signature.
        await verify(gates[1].id, await compact(gates[1], second)),
        await verify(gates[0].id, await proof(gates[0], hash, first)),
        await verify(gates[2].id, await proof(gates[2], hash, first)),
      ];
      expect(paid.map((answer) => (answer.status === 200 ? answer.body.payer : answer))).toEqual([
        second.address.toLowerCase(),
        first.address.toLowerCase(),
        first.address.toLowerCase(),
      ]);
      // Every transfer has paid its gate: none is left for a fourth, whoever signs.
      for (const signer of [first, second])
        expect((await verify(gates[3].id, await proof(gates[3], hash, signer))).status).toBe(409);
      expect((await verify(gates[0].id, await proof(gates[0], hash, first))).body).toEqual(paid[1].body);
      // The same 64-byte proof again: the same answer (an agent whose first answer was lost).
      expect((await verify(gates[1].id, await compact(gates[1], second))).body).toEqual(paid[0].body);
    });

    describe('posted by someone other than its payer', () => {
      it('is refused with 402 and records nothing, so the payer still gets its token', async () => {
        const victim = newWallet();
        await fundUsdc(app, victim.address, '1');
        await fundEth(app, victim.address);
        const victimGate = await openGate(app, site, '/tx/victim');
        const thiefGate = await openGate(app, site, '/tx/thief');
        const hash = await send(payTo, 10_000n, app.chain.usdc, victim);

        const unsigned = await verify(thiefGate.id, { tx_hash: hash });
        expect(unsigned).toMatchObject({ status: 402, body: { reason: 'invalid_transfer_proof_signature' } });
        expect(unsigned.body.detail).toMatch(/sign/i);
        const selfSigned = await verify(thiefGate.id, await proof(thiefGate, hash, newWallet()));
        expect(selfSigned).toMatchObject({ status: 402, body: { reason: 'invalid_transfer_proof_signature' } });
        for (const garbage of ['0xabcdef', `0x${'11'.repeat(65)}`, `0x${'00'.repeat(65)}`]) {
          expect(await verify(thiefGate.id, { tx_hash: hash, signature: garbage })).toMatchObject({
            status: 402,
            body: { reason: 'invalid_transfer_proof_signature' },
          });
        }
        expect(await recorded(hash)).toBe(0);
        expect((await app.call('GET', `/v1/gates/${thiefGate.id}`)).body.status).toBe('open');

        const paid = await verify(victimGate.id, await proof(victimGate, hash, victim));
        expect(paid.status === 200 ? 200 : paid).toBe(200);
        expect(paid.body).toMatchObject({ status: 'paid', payer: victim.address.toLowerCase(), url: '/tx/victim' });
        expect((await checkToken(paid.body.access_token, '/tx/victim')).body.valid).toBe(true);
      });

      it('cannot reuse the payer’s signature over another gate’s ref', async () => {
        const victimGate = await openGate(app, site, '/tx/signed-for-mine');
        const thiefGate = await openGate(app, site, '/tx/signed-for-yours');
        const hash = await send(payTo, 10_000n);
        const forVictimGate = await proof(victimGate, hash);
        const response = await verify(thiefGate.id, forVictimGate);
        expect(response).toMatchObject({ status: 402, body: { reason: 'invalid_transfer_proof_signature' } });
        expect(await recorded(hash)).toBe(0);
        expect((await verify(victimGate.id, forVictimGate)).status).toBe(200);
      });
    });

    it('takes a smart wallet’s ERC-1271 signature for the transfer it made', async () => {
      const owner = newWallet();
      const smartWallet = await deployTestWallet(app, owner);
      const gate = await openGate(app, site, '/tx/smart-wallet');
      const transfer = encodeFunctionData({ abi: USDC_ABI, functionName: 'transfer', args: [payTo, 10_000n] });
      const hash = await walletOf(app, owner).writeContract({
        address: smartWallet,
        abi: testWalletAbi,
        functionName: 'execute',
        args: [app.chain.usdc, transfer],
      } as never);
      await app.chain.publicClient.waitForTransactionReceipt({ hash });

      // The wallet's isValidSignature accepts its owner's signature of the EIP-191 digest, and no one else's.
      expect(await verify(gate.id, await proof(gate, hash, newWallet()))).toMatchObject({
        status: 402,
        body: { reason: 'invalid_transfer_proof_signature' },
      });
      // The hash is public: junk in the wrappers viem parses (ERC-8010, ERC-6492) is a refusal, not a 500.
      for (const signature of [`0x${'00'.repeat(40)}${'8010'.repeat(16)}`, `0x${'ab'.repeat(10)}${'6492'.repeat(16)}`])
        expect(await verify(gate.id, { tx_hash: hash, signature })).toMatchObject({
          status: 402,
          body: { reason: 'invalid_transfer_proof_signature' },
        });
      const paid = await verify(gate.id, await proof(gate, hash, owner));
      expect(paid.status === 200 ? 200 : paid).toBe(200);
      expect(paid.body.payer).toBe(smartWallet.toLowerCase());
    });

    it('finds a contract wallet’s transfer behind any number of other payers when the proof names its payer', async () => {
      const owner = newWallet();
      const smartWallet = await deployTestWallet(app, owner);
      const gate = await openGate(app, site, '/tx/smart-behind-others');
      // 33 payers' transfers of the same price to the same pay_to come first in the bundle.
      const others = Array.from({ length: 33 }, () => newWallet());
      for (const other of others) await fundUsdc(app, other.address, '1');
      // The wallet's authorization, signed by its owner's key (which its isValidSignature takes).
      const walletPayment = await signPayment(app, owner, gate, { from: smartWallet });
      const others_ = await Promise.all(others.map((other) => signPayment(app, other, gate)));
      const hash = await sendAuthorizationsBundled(app, [...others_, walletPayment]);
      const signed = await proof(gate, hash, owner);
      expect(await verify(gate.id, signed)).toMatchObject({
        status: 402,
        body: { detail: expect.stringMatching(/32/) },
      });
      const paid = await verify(gate.id, { ...signed, payer: smartWallet });
      expect(paid.status === 200 ? 200 : paid).toBe(200);
      expect(paid.body.payer).toBe(smartWallet.toLowerCase());
      // Naming a payer that did not sign, or paid nothing here, is no way in.
      const next = await openGate(app, site, '/tx/smart-behind-others-next');
      const posing = await verify(next.id, { ...(await proof(next, hash, newWallet())), payer: others[0].address });
      expect(posing).toMatchObject({ status: 402, body: { reason: 'invalid_transfer_proof_signature' } });
      const nobody = await verify(next.id, { ...(await proof(next, hash, owner)), payer: newWallet().address });
      expect(nobody).toMatchObject({ status: 402, body: { detail: expect.stringMatching(/no transfer/) } });
    });

    it('holds off the contract payers’ checks of a site past its budget of refused ones: junk proofs naming a bundle of contract wallets make no chain calls without end, and a payer signing with its own key is still paid', async () => {
      const { site: target } = await pricedSite(app, payee);
      const first = await openGate(app, target, '/tx/junk-bundle');
      // Two contract wallets (anyone's: their isValidSignature runs on the node) and a plain payer, in one bundle.
      const owners = [newWallet(), newWallet()];
      const contracts = [await deployTestWallet(app, owners[0]), await deployTestWallet(app, owners[1])];
      const plain = newWallet();
      await fundUsdc(app, plain.address, '1');
      const hash = await sendAuthorizationsBundled(app, [
        ...(await Promise.all(contracts.map((wallet, i) => signPayment(app, owners[i], first, { from: wallet })))),
        await signPayment(app, plain, first),
      ]);
      // Each stranger's proof asks both wallets (two refused checks): past the site's budget, no more.
      const proofs = REFUSED_SIMULATIONS_PER_SITE.limit / 2 + 5;
      const statuses: number[] = [];
      for (let i = 0; i < proofs; i++) {
        const gate = await openGate(app, target, `/tx/junk-bundle-${i}`);
        statuses.push((await verify(gate.id, await proof(gate, hash, newWallet()))).status);
      }
      expect(statuses.slice(0, REFUSED_SIMULATIONS_PER_SITE.limit / 2)).toEqual(
        Array(REFUSED_SIMULATIONS_PER_SITE.limit / 2).fill(402),
      );
      expect(statuses.slice(REFUSED_SIMULATIONS_PER_SITE.limit / 2)).toEqual(Array(5).fill(429));
      // A proof naming its contract payer is still checked (one check, not one a payer): its money
      // has moved, and junk must not keep it from its token. A stranger naming one is refused.
      const named = await openGate(app, target, '/tx/junk-bundle-named');
      const posing = await verify(named.id, { ...(await proof(named, hash, newWallet())), payer: contracts[0] });
      expect(posing).toMatchObject({ status: 402, body: { reason: 'invalid_transfer_proof_signature' } });
      const walletPaid = await verify(named.id, { ...(await proof(named, hash, owners[0])), payer: contracts[0] });
      expect(walletPaid.status === 200 ? 200 : walletPaid).toBe(200);
      expect(walletPaid.body.payer).toBe(contracts[0].toLowerCase());
      // Recovered locally, no chain call: the plain payer's own proof is taken while the site is held off.
      const own = await openGate(app, target, '/tx/junk-bundle-own');
      const paid = await verify(own.id, await proof(own, hash, plain));
      expect(paid.status === 200 ? 200 : paid).toBe(200);
      expect(paid.body.payer).toBe(plain.address.toLowerCase());
    });

    it('answers 422 for a signature that is not 0x-hex bytes, or too long', async () => {
      const gate = await openGate(app, site, '/tx/bad-signature');
      const hash = `0x${'cd'.repeat(32)}`;
      for (const signature of ['nope', '0x123', `0x${'ab'.repeat(5000)}`, 42]) {
        const response = await verify(gate.id, { tx_hash: hash, signature });
        expect(response.status).toBe(422);
        expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'signature'] });
      }
    });

    it('rejects a transfer from pay_to to itself, signed by pay_to: it pays the publisher nothing', async () => {
      await fundUsdc(app, payTo, '1');
      await fundEth(app, payTo);
      const gate = await openGate(app, site, '/tx/from-pay-to');
      const hash = await send(payTo, 10_000n, app.chain.usdc, payee);
      const response = await verify(gate.id, await proof(gate, hash, payee));
      expect(response).toMatchObject({
        status: 402,
        body: { reason: 'invalid_exact_evm_payload_recipient_mismatch', detail: expect.stringMatching(/itself/) },
      });
      expect(response.body.access_token).toBeUndefined();
      expect(await recorded(hash)).toBe(0);
    });

    it('rejects a transfer to another address', async () => {
      const gate = await openGate(app, site, '/tx/elsewhere');
      const response = await verify(gate.id, await proof(gate, await send(newWallet().address, 10_000n)));
      expect(response).toMatchObject({ status: 402, body: { reason: 'invalid_exact_evm_payload_recipient_mismatch' } });
    });

    it('rejects a transfer of another amount', async () => {
      const gate = await openGate(app, site, '/tx/short');
      const response = await verify(gate.id, await proof(gate, await send(payTo, 9_000n)));
      expect(response).toMatchObject({
        status: 402,
        body: { reason: 'invalid_exact_evm_payload_authorization_value' },
      });
    });

    it('rejects a transfer of another token', async () => {
      const deployHash = await wallet().deployContract({
        abi: testUsdcAbi,
        bytecode: testUsdcBytecode,
        args: ['USD Coin', '2'],
      } as never);
      const { contractAddress } = await app.chain.publicClient.waitForTransactionReceipt({ hash: deployHash });
      const mintHash = await wallet().writeContract({
        address: contractAddress!,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [payer.address, 1_000_000n],
      } as never);
      await app.chain.publicClient.waitForTransactionReceipt({ hash: mintHash });
      const gate = await openGate(app, site, '/tx/fake-token');
      const response = await verify(gate.id, await proof(gate, await send(payTo, 10_000n, contractAddress!)));
      expect(response).toMatchObject({ status: 402, body: { reason: 'invalid_asset' } });
    });

    it('rejects a transfer mined before the gate was offered (beyond the chain clock’s allowed skew)', async () => {
      const hash = await send(payTo, 10_000n);
      // A gate offered a minute after the transfer, as the middleware mints it with the site's secret.
      const now = Math.floor(Date.now() / 1000);
      const later = signGate(
        { ...readGate((await openGate(app, site, '/tx/too-early')).id)!, iat: now + 60, exp: now + 900 },
        site.secret,
      );
      const response = await verify(later, await proof(readGate(later)!, hash));
      expect(response).toMatchObject({ status: 402, body: { reason: 'transaction_predates_gate' } });
    });

    it('takes a transfer of a gate’s price mined after the price went up as that gate’s payment: the money has moved, as offered (an authorization would be refused, unsent)', async () => {
      const priced = await pricedSite(app, payee);
      const setPrice = (price: string) =>
        app.call('PUT', `/v1/sites/${priced.site.siteId}/pricing`, {
          body: { default_price_usd: price, rules: [] },
          headers: priced.publisher.auth,
        });
      expect((await setPrice('0.001')).status).toBe(200);
      const before = await openGate(app, priced.site, '/tx/rising');
      // Gates state whole seconds: the change comes in a later second than the offer.
      await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
      expect((await setPrice('0.5')).status).toBe(200);
      const hash = await send(before.pay_to, BigInt(before.amount));
      const paid = await verify(before.id, await proof(before, hash));
      expect(paid.status === 200 ? 200 : paid).toBe(200);
      expect(paid.body.price_usd).toBe('0.001');
    });

    it('rejects an unknown transaction hash', async () => {
      const gate = await openGate(app, site, '/tx/unknown');
      const response = await verify(gate.id, await proof(gate, `0x${'ab'.repeat(32)}`));
      expect(response).toMatchObject({ status: 402, body: { reason: 'transaction_not_found' } });
    });
  });

  it('takes no payment for a gate whose path no access token could carry: 414, nothing moves on chain', async () => {
    // Minted with the site's secret, as a middleware that does not bound paths would mint it.
    const open = await openGate(app, site, '/long/wide');
    const id = signGate({ ...readGate(open.id)!, path: '/' + '一'.repeat(1050) }, site.secret);
    const before = await usdcBalance(app, agent.address);
    const transfers = (await transfersTo(app, payTo)).length;
    const response = await verify(id, { payment: await signPayment(app, agent, { ...open, id }) });
    expect(response.status).toBe(414);
    expect(await usdcBalance(app, agent.address)).toBe(before);
    expect(await transfersTo(app, payTo)).toHaveLength(transfers);
  });

  it('takes no payment at an old price for a gate offered before the price went up; a gate offered above today’s price stands', async () => {
    const priced = await pricedSite(app, payee);
    // The rule for /rising/* changes; the default (0.001) does not.
    const setPrice = (price: string) =>
      app.call('PUT', `/v1/sites/${priced.site.siteId}/pricing`, {
        body: { default_price_usd: '0.001', rules: [{ path: '/rising/*', price_usd: price }] },
        headers: priced.publisher.auth,
      });
    expect((await setPrice('0.001')).status).toBe(200);
    const before = await openGate(app, priced.site, '/rising/x');
    // Spellings a lenient router serves as /rising/…: priced as that route, before and after.
    // So are a ";" and an escaped slash: Tomcat serves /rising;x/z as /rising/z, express.static /rising%2Fz.
    const spelled = [
      await openGate(app, priced.site, '/RISING/x'),
      await openGate(app, priced.site, '/rising/z/'),
      await openGate(app, priced.site, '/rising;x/z'),
      await openGate(app, priced.site, '/rising%2Fz'),
    ];
    // Gates state whole seconds: the change comes in a later second than the offers.
    await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
    expect((await setPrice('0.5')).status).toBe(200);
    const transfers = (await transfersTo(app, payTo)).length;
    for (const gate of [before, ...spelled]) {
      const old = await verify(gate.id, { payment: await signPayment(app, agent, gate) });
      expect({ url: gate.url, status: old.status }).toEqual({ url: gate.url, status: 409 });
      expect(old.body.detail).toMatch(/price .* went up/);
    }
    expect(await transfersTo(app, payTo)).toHaveLength(transfers);
    // A gate at the old price offered after the change (a middleware that has not seen it yet) is the publisher's own offer.
    const stale = signGate(
      { ...readGate(before.id)!, ref: crypto.randomUUID(), iat: Math.ceil(Date.now() / 1000) + 1 },
      priced.site.secret,
    );
    expect((await verify(stale, { payment: await signPayment(app, agent, { ...before, id: stale }) })).status).toBe(
      200,
    );
    // A fresh gate states today's price, and pays.
    const fresh = await openGate(app, priced.site, '/rising/x');
    expect(fresh.price_usd).toBe('0.5');
    expect((await verify(fresh.id, { payment: await signPayment(app, agent, fresh) })).status).toBe(200);
    // Down again: a gate offered at the higher price is still paid as offered.
    const high = await openGate(app, priced.site, '/rising/y');
    expect((await setPrice('0.01')).status).toBe(200);
    const paid = await verify(high.id, { payment: await signPayment(app, agent, high) });
    expect(paid.status).toBe(200);
    expect(paid.body.price_usd).toBe('0.5');
  });

  it('takes no payment to a payout address the publisher has since replaced or removed; a fresh gate pays the new one', async () => {
    // A publisher replaces a payout wallet it lost: gates minted before (by the API or a middleware
    // that has not reloaded yet) must not keep paying the old one.
    const old = newWallet().address;
    const priced = await pricedSite(app, old);
    const setPayout = (address: string | null) =>
      app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: address },
        headers: { ...priced.publisher.auth, 'x-confirm-password': priced.publisher.password },
      });
    const before = await openGate(app, priced.site, '/moved/x');
    const replaced = newWallet().address;
    expect((await setPayout(replaced)).status).toBe(200);
    const refused = await verify(before.id, { payment: await signPayment(app, agent, before) });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/payout address/);
    expect(await transfersTo(app, old)).toHaveLength(0);
    const fresh = await openGate(app, priced.site, '/moved/x');
    expect((await verify(fresh.id, { payment: await signPayment(app, agent, fresh) })).status).toBe(200);
    expect(await transfersTo(app, replaced)).toHaveLength(1);

    const another = await openGate(app, priced.site, '/moved/y');
    expect((await setPayout(null)).status).toBe(200);
    expect((await verify(another.id, { payment: await signPayment(app, agent, another) })).status).toBe(409);
    expect(await transfersTo(app, replaced)).toHaveLength(1);
  });

  /**
   * An authorization for a gate of `path` (a /rising/* page at 0.001, offered in an earlier second
   * than any price change after it), its first copy paused at `method` of `service` while `during`
   * runs (its twin sent, a price change): that copy's answer, and the transfers to payTo it made.
   */
  async function firstCopyPausedAt(
    path: string,
    [service, method]: [object, string],
    during: (sides: {
      sendAgain: () => ReturnType<typeof verify>;
      setPrice: (price: string) => ReturnType<typeof verify>;
    }) => Promise<void>,
  ) {
    const priced = await pricedSite(app, payee);
    const setPrice = (price: string) =>
      app.call('PUT', `/v1/sites/${priced.site.siteId}/pricing`, {
        body: { default_price_usd: '0.001', rules: [{ path: '/rising/*', price_usd: price }] },
        headers: priced.publisher.auth,
      });
    expect((await setPrice('0.001')).status).toBe(200);
    const gate = await openGate(app, priced.site, path);
    // Gates state whole seconds: a change is judged against the offers of the seconds before it.
    await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
    const payment = await signPayment(app, agent, gate);
    const sendAgain = () => verify(gate.id, { payment });
    const transfers = (await transfersTo(app, payTo)).length;
    const first = await pausedAt(service, method, () => during({ sendAgain, setPrice }), sendAgain);
    return { first, transfersMade: (await transfersTo(app, payTo)).length - transfers };
  }

  it('answers an authorization as its twin was answered when the twin, sent at once, was charged and the price rose before its own checks', async () => {
    let twin!: Awaited<ReturnType<typeof verify>>;
    // The first copy has read the authorization as not taken and waits before its checks; its twin
    // (a front's retry) is settled, then the publisher raises the price.
    const { first, transfersMade } = await firstCopyPausedAt(
      '/rising/twin',
      [app.app.get(RelayRefusalsStore), 'isRefused'],
      async ({ sendAgain, setPrice }) => {
        twin = await sendAgain();
        expect((await setPrice('0.5')).status).toBe(200);
      },
    );
    expect([twin.status, first.status, first.body.access_token]).toEqual([200, 200, twin.body.access_token]);
    expect(transfersMade).toBe(1);
  });

  it('takes no authorization whose price rose after its check, as its resend meanwhile was told', async () => {
    let resent!: Awaited<ReturnType<typeof verify>>;
    // The first copy passed its check and is being claimed; the publisher raises the price, and the
    // payer's resend (its answer lost) is told the authorization was not taken.
    const { first, transfersMade } = await firstCopyPausedAt(
      '/rising/resent',
      [app.app.get(PaymentStore), 'claimInPayerTurn'],
      async ({ sendAgain, setPrice }) => {
        expect((await setPrice('0.5')).status).toBe(200);
        resent = await sendAgain();
      },
    );
    expect(resent.status).toBe(409);
    expect([first.status, first.body.detail]).toEqual([resent.status, resent.body.detail]);
    expect(transfersMade).toBe(0);
  });

  it('sends no claimed authorization whose site was deleted, or whose payout was replaced, before its broadcast: nothing moves, the claim is let go', async () => {
    // Its key proves it for each publisher naming it.
    const old = newWallet();
    const changes: [string, (priced: Awaited<ReturnType<typeof pricedSite>>) => ReturnType<typeof verify>, number][] = [
      [
        '/claimed/deleted',
        (priced) =>
          app.call('DELETE', `/v1/sites/${priced.site.siteId}`, {
            headers: { ...priced.publisher.auth, 'x-confirm-password': priced.publisher.password },
          }),
        404,
      ],
      [
        '/claimed/moved',
        (priced) =>
          app.call('PATCH', '/v1/publishers/me', {
            body: { payout_address: newWallet().address },
            headers: { ...priced.publisher.auth, 'x-confirm-password': priced.publisher.password },
          }),
        409,
      ],
    ];
    for (const [path, change, status] of changes) {
      const priced = await pricedSite(app, old);
      const gate = await openGate(app, priced.site, path);
      const payment = await signPayment(app, agent, gate);
      // Claimed, its balance being read just before the broadcast, when the publisher changes the site.
      const answer = await pausedAt(
        app.app.get(PaymentsService),
        'payerCoverage',
        async () => expect((await change(priced)).status).toBeLessThan(300),
        () => verify(gate.id, { payment }),
      );
      expect(answer.status).toBe(status);
      expect(await transfersTo(app, old.address)).toHaveLength(0);
      expect(await app.database.prisma.payment.findUnique({ where: { gateId: readGate(gate.id)!.ref } })).toBeNull();
    }
  });

  it('limits verify to 50 a minute per gate, with Retry-After', async () => {
    const gate = await openGate(app, site, '/article/hammered');
    const statuses = [];
    for (let i = 0; i < 51; i++) statuses.push((await verify(gate.id, {})).status);
    expect(statuses.slice(0, 50).every((status) => status === 422)).toBe(true);
    const limited = await verify(gate.id, {});
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const other = await openGate(app, site, '/article/calm');
    expect((await verify(other.id, {})).status).toBe(422);
  });

  /** An authorization for a fresh gate of `target`, signed by a stranger in a fresh payer's name: only the simulation refuses it. */
  const junkTo = async (target: TestSite, path: string) => {
    const gate = await openGate(app, target, path);
    const payment = await signPayment(app, newWallet(), gate, { signer: newWallet() });
    return app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment },
      headers: { 'x-forwarded-for': freshIp() },
    });
  };
  /** Pays a fresh gate of `target` from `payer`. */
  const payFrom = async (target: TestSite, payer: PrivateKeyAccount, path: string) => {
    const gate = await openGate(app, target, path);
    const answer = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, payer, gate) },
      headers: { 'x-forwarded-for': freshIp() },
    });
    return { gate, answer };
  };
  /** A payer with USDC that paid `target`'s publisher lately (a page of `target`). */
  const payerOf = async (target: TestSite, path: string) => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    expect((await payFrom(target, payer, path)).answer.status).toBe(200);
    return payer;
  };
  /** A payer with USDC, signing for itself, that never paid here: any fresh key. */
  const freshPayer = async () => {
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    return payer;
  };
  /** A fresh payer's authorization, answered 429 with nothing charged and nothing claimed. */
  const expectFreshPayerHeldOff = async (target: TestSite, path: string, reason: RegExp) => {
    const payer = await freshPayer();
    const { gate, answer } = await payFrom(target, payer, path);
    expect(answer).toMatchObject({ status: 429, body: { detail: expect.stringMatching(reason) } });
    expect(answer.body.detail).toMatch(/nothing was charged/);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
    expect(await app.database.prisma.payment.findUnique({ where: { gateId: readGate(gate.id)!.ref } })).toBeNull();
  };

  it('asks the chain about at most REFUSED_SIMULATIONS_PER_SITE refused authorizations a minute per site, from any address, then only about known payers signing for themselves', async () => {
    // Gates are free (every 402 mints one), and a stranger's signature under sound terms is refused
    // only by the token's simulation: counted per gate, anyone could spend the node's quota.
    const { site: attacked } = await pricedSite(app, payee);
    const { limit } = REFUSED_SIMULATIONS_PER_SITE;
    const known = await payerOf(attacked, '/article/known-before-junk');
    // Known to another publisher only: a payment to a site of one's own, priced at a millionth of a
    // dollar and paid back to oneself, would make any key known for next to nothing.
    const knownElsewhere = await payerOf(site, '/article/known-elsewhere');
    const simulate = jest.spyOn(app.chain.publicClient, 'simulateContract');
    try {
      const statuses: number[] = [];
      // The count answers "over" on the refusal past the budget; the site is held off from then.
      for (let i = 0; i <= limit; i++) statuses.push((await junkTo(attacked, `/article/junk-${i}`)).status);
      expect(statuses).toEqual(Array(limit + 1).fill(402));
      const over = await junkTo(attacked, `/article/junk-${limit + 1}`);
      expect(over).toMatchObject({
        status: 429,
        body: { detail: expect.stringMatching(/this site's gates were refused/) },
      });
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(simulate).toHaveBeenCalledTimes(limit + 1);
      // Another site's gates are judged as before.
      expect((await junkTo(site, `/article/junk-${limit + 2}`)).status).toBe(402);
      // A fresh key signing for itself costs nothing to make: it reaches no chain while the site is held off.
      await expectFreshPayerHeldOff(attacked, '/article/junk-then-fresh', /this site's gates were refused/);
      expect(simulate).toHaveBeenCalledTimes(limit + 2);
      const { answer: fromElsewhere } = await payFrom(attacked, knownElsewhere, '/article/junk-then-elsewhere');
      expect(fromElsewhere).toMatchObject({ status: 429, body: { detail: expect.stringMatching(/publisher/) } });
      expect(simulate).toHaveBeenCalledTimes(limit + 2);
    } finally {
      simulate.mockRestore();
    }
    // A payer signing for itself that settled a payment lately (recovered and looked up only while
    // the site is held off) still pays.
    expect((await payFrom(attacked, known, '/article/junk-then-paid')).answer.status).toBe(200);
  });

  it('does not count a simulation whose connection to the node never opened: an outage holds no site off once it is over', async () => {
    // No payer can make a node refuse connections; counted, an outage under load would leave busy
    // sites taking known payers only for a minute after it ended.
    const { site: target } = await pricedSite(app, payee);
    const { limit } = REFUSED_SIMULATIONS_PER_SITE;
    const down = createPublicClient({ transport: http(`http://127.0.0.1:${await freePort()}`, { retryCount: 0 }) });
    const simulate = jest
      .spyOn(app.chain.publicClient, 'simulateContract')
      .mockImplementation((call) => down.simulateContract(call as never) as never);
    try {
      const statuses: number[] = [];
      for (let i = 0; i <= limit; i++) statuses.push((await junkTo(target, `/article/outage-${i}`)).status);
      expect(statuses).toEqual(Array(limit + 1).fill(503));
    } finally {
      simulate.mockRestore();
    }
    expect((await payFrom(target, await freshPayer(), '/article/after-outage')).answer.status).toBe(200);
  });

  it('asks the chain about at most REFUSED_SIMULATIONS_PER_PUBLISHER refused authorizations a minute across a publisher’s sites, then holds them all off', async () => {
    // A publisher registers sites at will: junk spread over sites of its own, none past its site's
    // budget, must not multiply what the node is asked.
    const { publisher, site: first } = await pricedSite(app, payee);
    const perSite = REFUSED_SIMULATIONS_PER_SITE.limit;
    const { limit } = REFUSED_SIMULATIONS_PER_PUBLISHER;
    const sites = [first];
    while (sites.length * perSite <= limit) sites.push(await pricedSiteOf(app, publisher));
    const known = await payerOf(sites[0], '/article/known-before-spread');
    // limit + 1 refusals, at most perSite on each site: the last one holds the publisher off.
    const targets = Array.from({ length: limit + 1 }, (_, i) => sites[Math.floor(i / perSite)]);
    const statuses = await inBatches(targets, 10, (target, i) => junkTo(target, `/article/spread-${i}`));
    expect(statuses.map((answer) => answer.status)).toEqual(Array(limit + 1).fill(402));

    const simulate = jest.spyOn(app.chain.publicClient, 'simulateContract');
    try {
      for (const target of [sites[0], sites[sites.length - 1]]) {
        const over = await junkTo(target, '/article/spread-over');
        expect(over).toMatchObject({ status: 429, body: { detail: expect.stringMatching(/publisher.*were refused/) } });
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      await expectFreshPayerHeldOff(sites[1], '/article/spread-fresh', /publisher.*were refused/);
      expect(simulate).not.toHaveBeenCalled();
      // Another publisher's site is judged as before.
      expect((await junkTo(site, '/article/spread-elsewhere')).status).toBe(402);
    } finally {
      simulate.mockRestore();
    }
    expect((await payFrom(sites[1], known, '/article/spread-then-paid')).answer.status).toBe(200);
  });

  /** Verifies gate i with payment i, each from a fresh address. */
  const verifierOf = (gates: readonly { id: string }[], payments: readonly unknown[]) => (i: number) =>
    app.call('POST', `/v1/gates/${gates[i].id}/verify`, {
      body: { payment: payments[i] },
      headers: { 'x-forwarded-for': freshIp() },
    });
  /**
   * A slow node for the simulations `hold` picks (by the authorization's `from`, lower-case, and the
   * simulation's count): they wait until answerHeld(); the others are answered as ever.
   */
  const holdSimulations = (hold: (from: string, call: number) => boolean) => {
    let answerHeld!: () => void;
    const held = new Promise<void>((resolve) => (answerHeld = resolve));
    const client = app.chain.publicClient;
    const original = client.simulateContract;
    let all = 0;
    let holding = 0;
    const simulate = jest.spyOn(client, 'simulateContract').mockImplementation((async (...args: never[]) => {
      const [request] = args as unknown as [{ args: readonly unknown[] }];
      if (hold(String(request.args[0]).toLowerCase(), ++all)) {
        holding++;
        await held;
      }
      return (original as (...a: never[]) => Promise<unknown>)(...args);
    }) as never);
    return { calls: () => holding, answerHeld, simulate };
  };
  /** Waits until `count` simulations are held (20 s at most). */
  const untilHeld = async (calls: () => number, count: number) => {
    for (const deadline = Date.now() + 20_000; calls() < count && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(calls()).toBe(count);
  };

  it('simulates at most SIMULATIONS_IN_FLIGHT_PER_SITE authorizations of a site at once: one more is 429 at once, no chain call, nothing claimed', async () => {
    // Refusals are counted as they come back: junk sent all at once would all be on its way to the
    // node before the first was counted. A slow node here: it answers none of the first simulations
    // until the test lets it.
    const { site: burst } = await pricedSite(app, payee);
    const limit = SIMULATIONS_IN_FLIGHT_PER_SITE;
    const gates: Awaited<ReturnType<typeof openGate>>[] = [];
    for (let i = 0; i <= limit; i++) gates.push(await openGate(app, burst, `/article/burst-${i}`));
    const payments = await Promise.all(
      gates.map((gate) => signPayment(app, newWallet(), gate, { signer: newWallet() })),
    );
    const verifyJunk = verifierOf(gates, payments);
    // The first `limit` simulations wait for the test.
    const { calls: heldCalls, answerHeld, simulate } = holdSimulations((_, call) => call <= limit);
    const first = Array.from({ length: limit }, (_, i) => verifyJunk(i));
    try {
      await untilHeld(heldCalls, limit);

      const more = await verifyJunk(limit);
      expect(more).toMatchObject({
        status: 429,
        body: { detail: expect.stringMatching(/at once.*nothing was charged/) },
      });
      expect(more.headers.get('retry-after')).toBe('1');
      expect(heldCalls()).toBe(limit);
      expect(
        await app.database.prisma.payment.findUnique({ where: { gateId: readGate(gates[limit].id)!.ref } }),
      ).toBeNull();
      // Another site's gates are judged meanwhile.
      expect((await junkTo(site, '/article/beside-burst')).status).toBe(402);

      answerHeld();
      expect((await Promise.all(first)).map((answer) => answer.status)).toEqual(Array(limit).fill(402));
    } finally {
      answerHeld();
      await Promise.allSettled(first);
      simulate.mockRestore();
    }
    // The slots are free once answered: the authorization turned away is judged now.
    expect((await verifyJunk(limit)).status).toBe(402);
  });

  it("simulates at most SIMULATIONS_IN_FLIGHT_PER_PAYER of one payer's authorizations at once: a payer the node answers slowly does not fill a site's slots", async () => {
    // A smart wallet's signature check can burn gas up to the call's cap: each of its simulations
    // is slow, and taking every slot of a site would turn the site's other payers away.
    const { site: crowded } = await pricedSite(app, payee);
    const slow = newWallet();
    const perPayer = SIMULATIONS_IN_FLIGHT_PER_PAYER;
    const gates: Awaited<ReturnType<typeof openGate>>[] = [];
    for (let i = 0; i <= perPayer; i++) gates.push(await openGate(app, crowded, `/article/slow-${i}`));
    const payments = await Promise.all(gates.map((gate) => signPayment(app, slow, gate, { signer: newWallet() })));
    const verifySlow = verifierOf(gates, payments);
    const { calls: slowCalls, answerHeld, simulate } = holdSimulations((from) => from === slow.address.toLowerCase());
    const first = Array.from({ length: perPayer }, (_, i) => verifySlow(i));
    try {
      await untilHeld(slowCalls, perPayer);
      const more = await verifySlow(perPayer);
      expect(more).toMatchObject({
        status: 429,
        body: { detail: expect.stringMatching(/from this payer .* at once.*nothing was charged/) },
      });
      expect(slowCalls()).toBe(perPayer);
      // Another payer of the same site pays meanwhile.
      expect((await payFrom(crowded, await freshPayer(), '/article/beside-slow')).answer.status).toBe(200);
    } finally {
      answerHeld();
      await Promise.allSettled(first);
      simulate.mockRestore();
    }
  });

  describe('access tokens', () => {
    /** `gate` as a middleware holding `secret` mints it: the same terms, signed with that secret. */
    const signedWith = <T extends { id: string }>(gate: T, secret: string): T => ({
      ...gate,
      id: signGate(readGate(gate.id)!, secret),
    });

    it("are checked 100 a minute per site, every visitor's together: strangers' junk relayed by a site spends them (README: verify locally)", async () => {
      const { site: relaying } = await pricedSite(app, payee);
      const junk = (i: number) => checkToken(`eyJ${'a'.repeat(20)}${i}.${'b'.repeat(43)}`, '/a', relaying.siteToken);
      for (let i = 0; i < DEFAULT_LIMIT.limit; i++) expect((await junk(i)).status).toBe(200);
      const now = Math.floor(Date.now() / 1000);
      const paid = signAccessToken(
        { gate_id: 'g', site_id: relaying.siteId, url: '/a', kid: relaying.kid, iat: now, exp: now + 1800 },
        relaying.secret,
      );
      expect((await checkToken(paid, '/a', relaying.siteToken)).status).toBe(429);
      // What the middleware does instead: no API call, no budget.
      expect(verifyAccessToken(paid, { secret: relaying.secret, siteId: relaying.siteId, url: '/a' })).toMatchObject({
        valid: true,
      });
    });

    it('are checked only with a valid site token', async () => {
      expect((await app.call('POST', '/v1/access-tokens/verify', { body: { token: 'x.y' } })).status).toBe(401);
      expect((await checkToken('x.y', undefined, `st_${'A'.repeat(43)}`)).status).toBe(401);
      expect(
        (await app.call('POST', '/v1/access-tokens/verify', { body: {}, headers: { 'x-site-token': site.siteToken } }))
          .status,
      ).toBe(422);
    });

    it('bind to the paid path: a cheap path’s token does not open another path', async () => {
      const gate = await openGate(app, site, '/cheap/teaser');
      expect(gate.price_usd).toBe('0.001');
      const paid = await verify(gate.id, { payment: await signPayment(app, agent, gate) });
      expect((await checkToken(paid.body.access_token, '/cheap/teaser')).body.valid).toBe(true);
      expect((await checkToken(paid.body.access_token, '/premium/report')).body).toEqual({
        valid: false,
        reason: 'wrong_path',
      });
      // Nor a target a router serves as another route, which requestPath() reads as the paid path.
      for (const url of ['/premium/x/%2e%2e/%2e%2e/cheap/teaser', '/premium/../cheap/teaser', '/cheap/teaser;x'])
        expect({ url, body: (await checkToken(paid.body.access_token, url)).body }).toEqual({
          url,
          body: { valid: false, reason: 'wrong_path' },
        });
    });

    it('are invalid once expired, tampered with, or shown to another site', async () => {
      const now = Math.floor(Date.now() / 1000);
      const expired = signAccessToken(
        {
          gate_id: '00000000-0000-4000-8000-000000000000',
          site_id: site.siteId,
          url: '/a',
          kid: site.kid,
          iat: now - 3600,
          exp: now - 1,
        },
        site.secret,
      );
      expect((await checkToken(expired)).body).toEqual({ valid: false, reason: 'expired' });

      const gate = await openGate(app, site, '/article/tokens');
      const paid = await verify(gate.id, { payment: await signPayment(app, agent, gate) });
      const [payload, signature] = paid.body.access_token.split('.');
      const flipped = `${payload}.${signature.slice(0, -2)}${signature.slice(-2) === 'AA' ? 'BA' : 'AA'}`;
      expect((await checkToken(flipped)).body).toEqual({ valid: false, reason: 'bad_signature' });
      expect((await checkToken('not.a.token')).body).toEqual({ valid: false, reason: 'malformed' });

      const { site: otherSite } = await pricedSite(app, payee);
      expect((await checkToken(paid.body.access_token, undefined, otherSite.siteToken)).body.valid).toBe(false);
    });

    it('keep verifying through a secret rotation, and tokens from the new secret verify too', async () => {
      const { publisher, site: rotating } = await pricedSite(app, payee);
      const gate = await openGate(app, rotating, '/article/rotate');
      const before = await verify(gate.id, { payment: await signPayment(app, agent, gate) });
      await app.call('POST', `/v1/sites/${rotating.siteId}/secret/rotate`, { headers: publisher.auth });
      expect((await checkToken(before.body.access_token, undefined, rotating.siteToken)).body.valid).toBe(true);
      const next = await openGate(app, rotating, '/article/rotate-2');
      const after = await verify(next.id, { payment: await signPayment(app, agent, next) });
      expect((await checkToken(after.body.access_token, undefined, rotating.siteToken)).body.valid).toBe(true);
    });

    // Grace 0: the secret is revoked. Grace 2 s: it still verifies, but a token it signs ends with it,
    // paid for and worthless once the money has moved; the current secret signs instead.
    it.each([0, 2])(
      "are never signed with a secret a rotation (grace %i s) retires between the signing and the payment's confirmation: the answer's token is the new secret's, of full lifetime",
      async (graceSeconds) => {
        const { publisher, site: rotating } = await pricedSite(app, payee);
        const gate = await openGate(app, rotating, `/article/retired-at-confirm-${graceSeconds}`);
        let newKid = '';
        const paid = await pausedAt(
          app.app.get(PaymentStore),
          'confirm',
          async () => {
            const rotated = await app.call('POST', `/v1/sites/${rotating.siteId}/secret/rotate`, {
              body: { grace_seconds: graceSeconds },
              headers: publisher.auth,
            });
            expect(rotated.status).toBe(200);
            newKid = rotated.body.kid;
          },
          async () => verify(gate.id, { payment: await signPayment(app, agent, gate) }),
        );
        expect(paid.status).toBe(200);
        const payload = peekAccessTokenPayload(paid.body.access_token);
        expect(payload?.kid).toBe(newKid);
        expect(payload && payload.exp - payload.iat).toBe(ACCESS_TOKEN_TTL_SECONDS);
        expect((await checkToken(paid.body.access_token, undefined, rotating.siteToken)).body.valid).toBe(true);
      },
    );

    it('are signed with the secret that signed their gate while it verifies, so the gate that minted it opens them', async () => {
      const { publisher, site: rotating } = await pricedSite(app, payee);
      const rotate = async (grace_seconds: number) =>
        (
          await app.call('POST', `/v1/sites/${rotating.siteId}/secret/rotate`, {
            body: { grace_seconds },
            headers: publisher.auth,
          })
        ).body as { kid: string; access_token_secret: string; previous_valid_until: string };
      // A gate minted by a middleware that holds only the first secret, after the rotation began.
      const second = await rotate(600);
      const minted = await openGate(app, rotating, '/article/minted-old');
      const oldGate = signedWith(minted, rotating.secret);
      const oldPayment = await signPayment(app, agent, oldGate);
      const paidOld = await verify(oldGate.id, { payment: oldPayment });
      expect(paidOld.status).toBe(200);
      expect(peekAccessTokenPayload(paidOld.body.access_token)?.kid).toBe(rotating.kid);
      // It cannot outlive its secret: it ends with the grace period (10 minutes), not 30 minutes on.
      const graceEnds = Math.floor(Date.parse(second.previous_valid_until) / 1000);
      expect(peekAccessTokenPayload(paidOld.body.access_token)?.exp).toBe(graceEnds);
      expect(Date.parse(paidOld.body.expires_at) / 1000).toBe(graceEnds);
      const opens = (token: string, secret: string, url: string) =>
        verifyAccessToken(token, { secret, siteId: rotating.siteId, url }).valid;
      expect(opens(paidOld.body.access_token, rotating.secret, '/article/minted-old')).toBe(true);
      // Asked again, the same token.
      const again = await verify(oldGate.id, { payment: oldPayment });
      expect(again.body.access_token).toBe(paidOld.body.access_token);
      // A gate signed with the current secret: a token of the current secret.
      const current = await openGate(app, rotating, '/article/minted-new');
      const paidNew = await verify(current.id, { payment: await signPayment(app, agent, current) });
      expect(peekAccessTokenPayload(paidNew.body.access_token)?.kid).toBe(second.kid);
      expect(opens(paidNew.body.access_token, second.access_token_secret, '/article/minted-new')).toBe(true);
      // Once the first secret stops verifying, its gates are not paid at all.
      await rotate(0);
      const late = await openGate(app, rotating, '/article/minted-late');
      const lateOld = signedWith(late, rotating.secret);
      expect((await verify(lateOld.id, { payment: await signPayment(app, agent, lateOld) })).status).toBe(404);
    });

    it('still answer a paid gate whose secret was revoked since, to its own proof only, with a token of the current secret', async () => {
      const { publisher, site: rotating } = await pricedSite(app, payee);
      const gate = await openGate(app, rotating, '/article/paid-then-revoked');
      const payment = await signPayment(app, agent, gate);
      const paid = await verify(gate.id, { payment });
      expect(paid.status).toBe(200);
      const rotated = await app.call('POST', `/v1/sites/${rotating.siteId}/secret/rotate`, {
        body: { grace_seconds: 0 },
        headers: publisher.auth,
      });
      // The payer asks again (its first answer was lost, or said pending): its payment, not a 404.
      const again = await verify(gate.id, { payment });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ url: '/article/paid-then-revoked', tx_hash: paid.body.tx_hash });
      expect(peekAccessTokenPayload(again.body.access_token)?.kid).toBe(rotated.body.kid);
      expect((await checkToken(again.body.access_token, undefined, rotating.siteToken)).body.valid).toBe(true);
      // No other proof pays it again, and no gate of other terms passes for it.
      expect((await verify(gate.id, { payment: await signPayment(app, agent, gate) })).status).toBe(409);
      const terms = readGate(gate.id)!;
      for (const other of [
        { ...terms, path: '/article/other' },
        { ...terms, micros: terms.micros - 1n },
        { ...terms, payTo: newWallet().address },
      ]) {
        const forged = signGate(other, 'cgsec_anything');
        expect((await verify(forged, { payment })).status).toBe(404);
      }
      expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('paid');
    });

    it('take no payment for a gate whose secret retires before the payment could settle: 409, nothing charged', async () => {
      const { publisher, site: rotating } = await pricedSite(app, payee);
      const rotated = await app.call('POST', `/v1/sites/${rotating.siteId}/secret/rotate`, {
        body: { grace_seconds: 30 },
        headers: publisher.auth,
      });
      expect(rotated.status).toBe(200);
      const minted = await openGate(app, rotating, '/article/retiring');
      const retiring = signedWith(minted, rotating.secret);
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      const refused = await verify(retiring.id, { payment: await signPayment(app, payer, retiring) });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/secret .* retired/);
      expect(await usdcBalance(app, payer.address)).toBe(1_000_000n);
      expect(await app.database.prisma.payment.count({ where: { siteId: rotating.siteId } })).toBe(0);
      // The gate a middleware with the current secret offers is paid as usual.
      const paid = await verify(minted.id, { payment: await signPayment(app, payer, minted) });
      expect(paid.status).toBe(200);
    });
  });
});

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** (r, n − s) with the other parity: recovers the same signer, and strict ECDSA (USDC's) refuses it. */
function highSTwin(signature: Hex): Hex {
  const { r, s, yParity } = parseSignature(signature);
  const high = SECP256K1_N - BigInt(s);
  return serializeSignature({ r, s: `0x${high.toString(16).padStart(64, '0')}`, yParity: yParity === 0 ? 1 : 0 });
}

/** `run` over `items`, `size` at a time (sent together, as a crawler would), in order. */
async function inBatches<T, R>(items: T[], size: number, run: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size)
    results.push(...(await Promise.all(items.slice(start, start + size).map((item, i) => run(item, start + i)))));
  return results;
}
