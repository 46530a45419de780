import { randomBytes } from 'node:crypto';
import { transferProofMessage, USDC_ABI } from '@crawlgate/core';
import { encodeEventTopics, toFunctionSelector, toHex } from 'viem';
import { increaseTime, mineBlocks, revert, snapshot } from '@crawlgate/devchain';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import {
  fundUsdc,
  newWallet,
  sendAuthorizationAsStranger,
  sendAuthorizationsBundled,
  sendCancelAsStranger,
  signPayment,
  transfersTo,
  usdcBalance,
} from '../../test/test-agent';
import { startRpcRewriter } from '../../test/rpc-rewriter';
import { startConfirmingApp, startTestApp, type TestApp } from '../../test/test-app';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { toSignedAuthorization } from './authorization-checks';
import { ReconcilerService } from './reconciler.service';
import { serializeAuthorization } from './payments.service';

/** The hold on transfers not our relayer's in these tests (120 s by default). */
const FOREIGN_HOLD_SECONDS = 2;

describe('settlements that outlive their request', () => {
  let db: TestDatabase;
  let app: TestApp;
  let site: TestSite;
  const masterKey = randomBytes(32);
  // Its key signs each publisher's proof: several publishers here name this one address.
  const payee = newWallet();
  const payTo = payee.address;
  const agent = newWallet();

  beforeAll(async () => {
    db = await createTestDatabase();
    // A short hold on transfers not our relayer's, waited out by the tests a stranger's transaction pays.
    app = await startTestApp({
      database: db.database,
      masterKey,
      isolateChain: true,
      config: { chain: { foreignSettlementHoldSeconds: FOREIGN_HOLD_SECONDS } },
    });
    ({ site } = await pricedSite(app, payee));
    await fundUsdc(app, agent.address, '1');
  });
  afterAll(async () => {
    await app.close();
    await db.dispose();
  });

  const reconcile = (on: TestApp) => on.app.get(ReconcilerService).runOnce();
  /** An instance on this database waiting two confirmations, its chain read through `rpcUrl` (a rewriting proxy). */
  const twoConfirmationsThrough = (rpcUrl: string) => startConfirmingApp(app, { masterKey, chainRpcUrl: rpcUrl });
  /** The payment's request gives up once it has broadcast (202), two blocks pass: the reconciler is the one to judge it. */
  const leftToReconciler = async (
    gate: Awaited<ReturnType<typeof openGate>>,
    payment: Awaited<ReturnType<typeof signPayment>>,
  ) => {
    const quick = await startTestApp({
      database: db.database,
      masterKey,
      config: { chain: { settlementTimeoutMs: 0 } },
    });
    expect((await quick.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } })).status).toBe(202);
    await quick.app.close();
    await mineBlocks(app.chain.rpcUrl, 2);
  };
  /**
   * The chain's clock past the hold on transfers not our relayer's: a block stamped after it, the
   * clock moved rather than waited for. It stays that far ahead of the wall clock for the tests
   * after, whose authorizations are valid for minutes.
   */
  const pastForeignSettlementHold = () => increaseTime(app.chain.rpcUrl, FOREIGN_HOLD_SECONDS + 1);

  it('finishes a settlement whose request gave up after broadcasting, once, without a second charge', async () => {
    // An instance that answers as soon as the transaction is sent, then dies.
    const dying = await startTestApp({
      database: db.database,
      masterKey,
      config: { chain: { settlementTimeoutMs: 0 } },
    });
    const gate = await openGate(dying, site, '/reconcile/sent');
    const payment = await signPayment(dying, agent, gate);
    const pending = await dying.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(pending.status).toBe(202);
    expect(pending.headers.get('retry-after')).toBe('5');
    expect(pending.body).toMatchObject({
      status: 'settlement_pending',
      gate_id: gate.id,
      tx_hash: expect.stringMatching(/^0x/),
    });
    await dying.app.close();

    // A fresh instance on the same database; its background reconciler completes the payment.
    const survivor = await startTestApp({
      database: db.database,
      masterKey,
      config: { chain: { reconcileIntervalMs: 100 } },
    });
    let status = 'settling';
    for (let i = 0; i < 100 && status !== 'paid'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await survivor.call('GET', `/v1/gates/${gate.id}`)).body.status;
    }
    expect(status).toBe('paid');
    const again = await survivor.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(again.status).toBe(200);
    expect(again.body.tx_hash).toBe(pending.body.tx_hash);
    expect((await transfersTo(survivor, payTo)).filter((t) => t.hash === pending.body.tx_hash)).toHaveLength(1);
    await survivor.app.close();
  });

  /**
   * The state a process leaves when it dies right after claiming the gate, before broadcasting; the
   * authorization valid for `validForSeconds` from now, and from `validAfterSeconds` from now if given.
   */
  async function claimedButNeverSent(
    url: string,
    validForSeconds = 300,
    on = site,
    tokenKid?: string,
    claimedMsAgo = 60_000,
    validAfterSeconds?: number,
  ) {
    const gate = await openGate(app, on, url);
    const now = Math.floor(Date.now() / 1000);
    const validBefore = now + validForSeconds;
    const signed = await signPayment(app, agent, gate, {
      validBefore: BigInt(validBefore),
      ...(validAfterSeconds === undefined ? {} : { validAfter: BigInt(now + validAfterSeconds) }),
    });
    const auth = toSignedAuthorization(signed.payload as never);
    await app.database.prisma.payment.create({
      data: {
        gateId: gate.ref,
        siteId: on.siteId,
        publisherId: (await app.database.prisma.site.findUniqueOrThrow({ where: { id: on.siteId } })).publisherId,
        tokenKid,
        url,
        method: 'authorization',
        status: 'submitting',
        chainId: app.chain.chainId,
        asset: app.chain.usdc,
        payer: agent.address.toLowerCase(),
        payTo: payTo.toLowerCase(),
        amount: BigInt(gate.amount),
        nonce: auth.nonce,
        authorization: serializeAuthorization(auth),
        createdAt: new Date(Date.now() - claimedMsAgo),
      },
    });
    return { gate, signed, validBefore };
  }

  it('submits a claimed but never broadcast authorization, then records it', async () => {
    const { gate, signed } = await claimedButNeverSent('/reconcile/never-sent');
    expect(await reconcile(app)).toMatchObject({ resubmitted: 1 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await reconcile(app)).toMatchObject({ finalized: 1 });
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: signed } });
    expect(paid.status).toBe(200);
    expect((await transfersTo(app, payTo)).filter((t) => t.hash === paid.body.tx_hash)).toHaveLength(1);
  });

  it('sends nothing for a claim whose gate’s secret stopped verifying meanwhile, and releases it once its authorization expired', async () => {
    // Its token could only be signed with another secret, which the gate that minted it does not hold.
    const { publisher, site: rotating } = await pricedSite(app, payee);
    const { gate, validBefore } = await claimedButNeverSent('/reconcile/secret-gone', 10, rotating, rotating.kid);
    const rotated = await app.call('POST', `/v1/sites/${rotating.siteId}/secret/rotate`, {
      body: { grace_seconds: 0 },
      headers: publisher.auth,
    });
    expect(rotated.status).toBe(200);
    const before = (await transfersTo(app, payTo)).length;
    // While the authorization could still land (a broadcast the row never recorded), it is kept, unsent.
    expect(await reconcile(app)).toMatchObject({ waiting: 1, resubmitted: 0, released: 0 });
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(1);
    expect(await passAfterItsEnd(validBefore)).toMatchObject({ released: 1, resubmitted: 0 });
    expect(await transfersTo(app, payTo)).toHaveLength(before);
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(0);
  });

  it('sends nothing for a claim whose payTo its publisher replaced meanwhile, and releases it once its authorization expired', async () => {
    // The old wallet may be the lost one: a gate minted before the change must not pay it (assertPayeeStands).
    const { publisher, site: moving } = await pricedSite(app, payee);
    const { gate, validBefore } = await claimedButNeverSent('/reconcile/payee-moved', 10, moving);
    const newPayTo = newWallet().address;
    const moved = await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: newPayTo },
      headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
    });
    expect(moved.status).toBe(200);
    const before = (await transfersTo(app, payTo)).length;
    expect(await reconcile(app)).toMatchObject({ waiting: 1, resubmitted: 0, released: 0 });
    expect(await passAfterItsEnd(validBefore)).toMatchObject({ released: 1, resubmitted: 0 });
    expect(await transfersTo(app, payTo)).toHaveLength(before);
    expect(await transfersTo(app, newPayTo)).toHaveLength(0);
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(0);
  });

  /**
   * A reconciler pass on a chain whose latest block is stamped past `validBefore`: the chain's clock
   * is moved there rather than waited for, and put back to the wall clock after the pass (with the
   * empty blocks mined meanwhile), so the tests after sign authorizations against the wall clock.
   */
  async function passAfterItsEnd(validBefore: number) {
    const before = await snapshot(app.chain.rpcUrl);
    try {
      const head = await app.chain.publicClient.getBlock({ blockTag: 'latest' });
      await increaseTime(app.chain.rpcUrl, Math.max(1, validBefore + 1 - Number(head.timestamp)));
      return await reconcile(app);
    } finally {
      await revert(app.chain.rpcUrl, before);
    }
  }

  it('releases the gate once the chain is past the unsent authorization’s end: nothing charged, gate payable again', async () => {
    const { gate, validBefore } = await claimedButNeverSent('/reconcile/expired', 3);
    const before = (await transfersTo(app, payTo)).length;
    // Too close to its end to send again, but a broadcast this row never recorded could still land.
    expect(await reconcile(app)).toMatchObject({ waiting: 1, released: 0, resubmitted: 0 });
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(1);
    expect(await passAfterItsEnd(validBefore)).toMatchObject({ released: 1 });
    expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('open');
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(0);
    expect((await transfersTo(app, payTo)).length).toBe(before);
  });

  it('releases a claim whose payer canceled its authorization before the recent blocks it searches first (an outage): nothing charged, the gate payable again', async () => {
    // An instance of this API searching only 10 recent blocks first, so that mining passes them.
    const shortSighted = await startTestApp({
      database: db.database,
      masterKey,
      chainRpcUrl: app.chain.rpcUrl,
      config: { chain: { recentLogBlocks: 10 } },
    });
    try {
      // Its validAfter a few seconds ahead of the chain's clock (the API's running ahead of it): the
      // cancel, which the token takes at any time, is in a block stamped before it.
      const { gate, signed } = await claimedButNeverSent(
        '/reconcile/canceled-long-ago',
        300,
        site,
        undefined,
        60_000,
        5,
      );
      const before = await usdcBalance(app, agent.address);
      const nonce = signed.payload.authorization.nonce as `0x${string}`;
      await app.chain.publicClient.waitForTransactionReceipt({ hash: await sendCancelAsStranger(app, agent, nonce) });
      // The API was away longer than those blocks: the token says the nonce is spent, no recent block why.
      await mineBlocks(app.chain.rpcUrl, 11);
      await reconcile(shortSighted);
      expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(0);
      expect((await app.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('open');
      expect(await usdcBalance(app, agent.address)).toBe(before);
    } finally {
      await shortSighted.close();
    }
  });

  it('releases nothing on a node whose logs miss a settlement made before the recent blocks (an outage) and show a look-alike cancel from another contract: the claim waits, and is paid once the node answers', async () => {
    let hiding = true;
    let signed: Awaited<ReturnType<typeof claimedButNeverSent>>['signed'] | undefined;
    const canceledTopics = () => {
      const { from, nonce } = signed!.payload.authorization;
      return encodeEventTopics({
        abi: USDC_ABI,
        eventName: 'AuthorizationCanceled',
        args: { authorizer: from as `0x${string}`, nonce: nonce as `0x${string}` },
      });
    };
    const rewriter = await startRpcRewriter(app.chain.rpcUrl, ({ method, params, result }) => {
      if (!hiding || method !== 'eth_getLogs') return result;
      const filter = params[0] as { topics?: (string | null)[]; fromBlock?: string } | undefined;
      if (filter?.topics?.[0] !== canceledTopics()[0]) return [];
      // Anyone can deploy a contract emitting the token's event with the payer's nonce.
      return [
        {
          address: newWallet().address,
          topics: canceledTopics(),
          data: '0x',
          blockNumber: filter.fromBlock,
          blockHash: `0x${'ab'.repeat(32)}`,
          transactionHash: `0x${'cd'.repeat(32)}`,
          transactionIndex: '0x0',
          logIndex: '0x0',
          removed: false,
        },
      ];
    });
    const blind = await startTestApp({
      database: db.database,
      masterKey,
      chainRpcUrl: rewriter.url,
      config: { chain: { recentLogBlocks: 10, foreignSettlementHoldSeconds: FOREIGN_HOLD_SECONDS } },
    });
    try {
      const claimed = await claimedButNeverSent('/reconcile/logs-missing');
      signed = claimed.signed;
      await app.chain.publicClient.waitForTransactionReceipt({ hash: await sendAuthorizationAsStranger(app, signed) });
      await mineBlocks(app.chain.rpcUrl, 11);
      await reconcile(blind);
      expect(await app.database.prisma.payment.count({ where: { gateId: claimed.gate.ref } })).toBe(1);
      expect((await app.call('GET', `/v1/gates/${claimed.gate.id}`)).body.status).not.toBe('open');

      hiding = false;
      await pastForeignSettlementHold();
      expect(await reconcile(blind)).toMatchObject({ finalized: 1 });
      const paid = await app.call('POST', `/v1/gates/${claimed.gate.id}/verify`, { body: { payment: signed } });
      expect(paid.status === 200 ? 200 : paid).toBe(200);
    } finally {
      await blind.close();
      await rewriter.close();
    }
  });

  it('keeps a claim the chain would still settle when this machine’s clock runs ahead, and finishes it once the clock is right', async () => {
    const { gate, signed } = await claimedButNeverSent('/reconcile/clock-ahead', 60);
    const realNow = Date.now.bind(Date);
    const clockAhead = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 120_000);
    try {
      expect(await reconcile(app)).toMatchObject({ waiting: 1, released: 0, resubmitted: 0 });
    } finally {
      clockAhead.mockRestore();
    }
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(1);
    expect(await reconcile(app)).toMatchObject({ resubmitted: 1 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await reconcile(app)).toMatchObject({ finalized: 1 });
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: signed } });
    expect(paid.status).toBe(200);
  });

  it('leaves a claim just made alone when this instance’s clock runs ahead of the database: its request may be broadcasting it', async () => {
    // Another instance resent a claim half a second old: its own clock said it was past the wait.
    const { gate } = await claimedButNeverSent('/reconcile/fresh-claim', 300, site, undefined, 500);
    const before = (await transfersTo(app, payTo)).length;
    // PGlite runs in this process, its clock this process's: an instance's clock can be ahead of it only on PostgreSQL.
    const skew = db.database.kind === 'postgres' ? 45_000 : 0;
    const realNow = Date.now.bind(Date);
    const clockAhead = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skew);
    try {
      expect(await reconcile(app)).toMatchObject({ resubmitted: 0, released: 0, finalized: 0 });
    } finally {
      clockAhead.mockRestore();
      await app.database.prisma.payment.deleteMany({ where: { gateId: gate.ref } });
    }
    expect(await transfersTo(app, payTo)).toHaveLength(before);
  });

  /**
   * A request on one instance stuck in its balance check past the settlement timeout (2 s here),
   * beside another instance on the same database: `fail()` lets the check fail, `answer` is the
   * request's answer. `finish()` asserts the payment was recorded once and pays, once, with its token.
   */
  async function stuckBesideAnother(path: string) {
    const short = { chain: { settlementTimeoutMs: 2_000 } };
    const stuck = await startTestApp({ database: db.database, masterKey, config: short });
    const other = await startTestApp({ database: db.database, masterKey, config: short });
    const gate = await openGate(stuck, site, path);
    const payment = await signPayment(stuck, agent, gate);
    let fail!: () => void;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    // The balance check's one read (payerCoverage's multicall), which nothing else on the way makes.
    jest
      .spyOn(stuck.chain.publicClient, 'multicall')
      .mockImplementation((() => failing.then(() => Promise.reject(new Error('fetch failed')))) as never);
    const before = (await transfersTo(app, payTo)).length;
    const answer = stuck.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    const reconcileOther = () => other.app.get(ReconcilerService).runOnce();
    return {
      other,
      fail,
      answer,
      reconcileOther,
      async finish() {
        expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(1);
        for (let i = 0; i < 20 && (await reconcileOther()).finalized === 0; i++)
          await new Promise((resolve) => setTimeout(resolve, 200));
        expect((await other.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } })).status).toBe(200);
        expect(await transfersTo(app, payTo)).toHaveLength(before + 1);
      },
      async close() {
        jest.restoreAllMocks();
        await stuck.app.close();
        await other.app.close();
      },
    };
  }
  /** A request's answer for a settlement under way or done: never "nothing was charged". */
  const expectUnderWay = (answered: { status: number; body: { status?: string } }) =>
    expect(answered.status).toBe(answered.body.status === 'paid' ? 200 : 202);

  it('keeps a claim another instance’s reconciler sent while its request was stuck: the request answers 202, never “nothing was charged”, and the payment is recorded once', async () => {
    // The request's balance check hangs past the settlement timeout, the other instance's
    // reconciler sends the claim, then the check fails: releasing the claim then deleted a
    // settlement the chain made (the payer charged, no token, no record).
    const race = await stuckBesideAnother('/reconcile/taken-over');
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await race.reconcileOther()).toMatchObject({ resubmitted: 1 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      race.fail();
      expectUnderWay(await race.answer);
      await race.finish();
    } finally {
      await race.close();
    }
  }, 60_000);

  it('keeps a claim whose request fails while another instance’s reconciler is broadcasting it: recorded before it is sent', async () => {
    // The reconciler recorded its hash only once the node answered: a stuck request failing in
    // between found the claim unsent, deleted it and answered "nothing was charged" while the
    // chain took the payment.
    const race = await stuckBesideAnother('/reconcile/mid-broadcast');
    try {
      // The other instance's broadcast reaches the node; its answer waits until the request has answered.
      const send = race.other.chain.relayer.sendRawTransaction.bind(race.other.chain.relayer);
      let answered: Awaited<typeof race.answer> | undefined;
      jest.spyOn(race.other.chain.relayer, 'sendRawTransaction').mockImplementation((async (request: never) => {
        const hash = await send(request);
        race.fail();
        answered = await race.answer;
        return hash;
      }) as never);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await race.reconcileOther()).toMatchObject({ resubmitted: 1 });
      expectUnderWay(answered!);
      await race.finish();
    } finally {
      await race.close();
    }
  }, 60_000);

  it('pays no other gate with our own settlement of a claimed authorization; that claim is finished', async () => {
    const { gate: claimed, signed } = await claimedButNeverSent('/reconcile/ours-elsewhere');
    // Our relayer sends it (a broadcast its request never recorded, or the reconciler's).
    expect(await reconcile(app)).toMatchObject({ resubmitted: 1 });
    const hash = (await app.database.prisma.payment.findUniqueOrThrow({ where: { gateId: claimed.ref } }))
      .txHash as `0x${string}`;
    await app.chain.publicClient.waitForTransactionReceipt({ hash });
    // Its payer presents that transaction for another gate of the same price.
    const other = await openGate(app, site, '/reconcile/ours-elsewhere-b');
    const reused = await app.call('POST', `/v1/gates/${other.id}/verify`, {
      body: { tx_hash: hash, signature: await agent.signMessage({ message: transferProofMessage(other.ref, hash) }) },
    });
    expect({ status: reused.status, token: reused.body.access_token }).toEqual({ status: 409, token: undefined });
    expect((await app.call('GET', `/v1/gates/${other.id}`)).body.status).toBe('open');
    expect(await reconcile(app)).toMatchObject({ finalized: 1 });
    const paid = await app.call('POST', `/v1/gates/${claimed.id}/verify`, { body: { payment: signed } });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    expect(paid.body.tx_hash).toBe(hash.toLowerCase());
  });

  it('lets the payer’s own transaction of a claimed authorization pay the gate it names; the copied claim is released', async () => {
    // A claim made with the payer's authorization while the payer's own transaction of it was
    // pending (anyone can copy it from the mempool): the payer's signed tx_hash decides the gate.
    const { gate: copied, signed } = await claimedButNeverSent('/reconcile/copied');
    const hash = await sendAuthorizationAsStranger(app, signed);
    await app.chain.publicClient.waitForTransactionReceipt({ hash });
    const own = await openGate(app, site, '/reconcile/copied-own');
    const paid = await app.call('POST', `/v1/gates/${own.id}/verify`, {
      body: { tx_hash: hash, signature: await agent.signMessage({ message: transferProofMessage(own.ref, hash) }) },
    });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    expect(paid.body.access_token).toEqual(expect.any(String));
    // The copied claim is never paid: its authorization's transfer paid the payer's gate. It is
    // released (nothing of its own was charged), not left settling for ever.
    expect(await reconcile(app)).toMatchObject({ finalized: 0, released: 1 });
    expect((await app.call('GET', `/v1/gates/${copied.id}`)).body.status).toBe('open');
    const copiedAgain = await app.call('POST', `/v1/gates/${copied.id}/verify`, { body: { payment: signed } });
    expect(copiedAgain.body.access_token).toBeUndefined();
    expect((await transfersTo(app, payTo)).filter((t) => t.hash === hash)).toHaveLength(1);
  });

  it('records each of two claimed authorizations a stranger settled in one transaction, each with its token', async () => {
    // Anyone can bundle other people's authorizations (read from the mempool or our calldata) in
    // one multicall: both payers were charged, by one transaction, and each paid its own gate.
    const first = await claimedButNeverSent('/reconcile/bundled-a');
    const second = await claimedButNeverSent('/reconcile/bundled-b');
    const hash = await sendAuthorizationsBundled(app, [first.signed, second.signed]);
    // Held a while first: either payer may still name the transfer for a gate of its own.
    expect(await reconcile(app)).toMatchObject({ finalized: 0, released: 0 });
    await pastForeignSettlementHold();
    expect(await reconcile(app)).toMatchObject({ finalized: 2 });
    for (const { gate, signed } of [first, second]) {
      const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: signed } });
      expect(paid.status === 200 ? 200 : paid).toBe(200);
      expect(paid.body).toMatchObject({ tx_hash: hash.toLowerCase(), access_token: expect.any(String) });
    }
    expect((await transfersTo(app, payTo)).filter((t) => t.hash === hash)).toHaveLength(2);
    // The bundle pays no third gate: each of its transfers paid its own.
    const third = await openGate(app, site, '/reconcile/bundled-c');
    const reused = await app.call('POST', `/v1/gates/${third.id}/verify`, {
      body: { tx_hash: hash, signature: await agent.signMessage({ message: transferProofMessage(third.ref, hash) }) },
    });
    expect({ status: reused.status, token: reused.body.access_token }).toEqual({ status: 409, token: undefined });
  });

  it('lets a transfer pay its payer’s gate beside a claimed authorization in the same transaction; the claim is recorded for its own', async () => {
    const { gate: claimed, signed } = await claimedButNeverSent('/reconcile/beside-claimed');
    const other = newWallet();
    await fundUsdc(app, other.address, '1');
    const own = await openGate(app, site, '/reconcile/beside-own');
    const hash = await sendAuthorizationsBundled(app, [signed, await signPayment(app, other, own)]);
    const paid = await app.call('POST', `/v1/gates/${own.id}/verify`, {
      body: { tx_hash: hash, signature: await other.signMessage({ message: transferProofMessage(own.ref, hash) }) },
    });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    expect(paid.body.payer).toBe(other.address.toLowerCase());
    await pastForeignSettlementHold();
    await reconcile(app);
    const first = await app.call('POST', `/v1/gates/${claimed.id}/verify`, { body: { payment: signed } });
    expect(first.status === 200 ? 200 : first).toBe(200);
    expect(first.body).toMatchObject({ tx_hash: hash.toLowerCase(), access_token: expect.any(String) });
  });

  it('credits a payer’s proof with its transfer that no claim names, when its claimed one is in the same bundle', async () => {
    // Both of the payer's authorizations, one claimed for a gate, the other meant for a tx_hash
    // proof, sent together by a stranger: the proof must not take the claimed one's transfer.
    const { gate: claimed, signed } = await claimedButNeverSent('/reconcile/two-of-one-a');
    const own = await openGate(app, site, '/reconcile/two-of-one-b');
    const hash = await sendAuthorizationsBundled(app, [signed, await signPayment(app, agent, own)]);
    const paid = await app.call('POST', `/v1/gates/${own.id}/verify`, {
      body: { tx_hash: hash, signature: await agent.signMessage({ message: transferProofMessage(own.ref, hash) }) },
    });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    await pastForeignSettlementHold();
    await reconcile(app);
    const first = await app.call('POST', `/v1/gates/${claimed.id}/verify`, { body: { payment: signed } });
    expect(first.status === 200 ? 200 : first).toBe(200);
    expect(first.body).toMatchObject({ tx_hash: hash.toLowerCase(), access_token: expect.any(String) });
  });

  it('releases nothing on a node that says our settlement reverted while its AuthorizationUsed is on chain: it waits, and records the payment once the node is right', async () => {
    // A node that lies or lags (a load balancer across forks, a bad cache): every receipt "reverted".
    let lying = true;
    const rewriter = await startRpcRewriter(app.chain.rpcUrl, ({ method, result }) =>
      lying && method === 'eth_getTransactionReceipt' && result ? { ...(result as object), status: '0x0' } : result,
    );
    const liar = await startTestApp({ database: db.database, masterKey, chainRpcUrl: rewriter.url });
    try {
      const gate = await openGate(liar, site, '/reconcile/lying-node');
      const payment = await signPayment(app, agent, gate);
      const first = await liar.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
      expect(first.status).toBe(202);
      expect(
        await transfersTo(app, payTo).then((all) => all.filter((t) => t.hash === first.body.tx_hash)),
      ).toHaveLength(1);
      // Read as "the nonce paid another authorization of the payer's": the claim was deleted.
      expect(await reconcile(liar)).toMatchObject({ released: 0 });
      expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(1);

      lying = false;
      expect(await reconcile(liar)).toMatchObject({ finalized: 1, released: 0 });
      const paid = await liar.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
      expect(paid.status).toBe(200);
      expect(paid.body).toMatchObject({ status: 'paid', tx_hash: first.body.tx_hash });
      // Not payable again by the same payer: one transfer for the page.
      const again = await liar.call('POST', `/v1/gates/${gate.id}/verify`, {
        body: { payment: await signPayment(app, agent, gate) },
      });
      expect(again.status).not.toBe(200);
    } finally {
      await liar.app.close();
      await rewriter.close();
    }
  });

  it('takes no cancel from a block not yet confirmed for one that paid: a node on another fork says our settlement reverted, canceled by its payer', async () => {
    // Two confirmations: the block a node shows the payer's cancel in is its newest, which a reorg may undo.
    let lying = true;
    let signed: ReturnType<typeof toSignedAuthorization> | undefined;
    const canceledTopics = () =>
      encodeEventTopics({
        abi: USDC_ABI,
        eventName: 'AuthorizationCanceled',
        args: { authorizer: signed!.from, nonce: signed!.nonce },
      });
    let latest = 0n;
    const rewriter = await startRpcRewriter(app.chain.rpcUrl, ({ method, params, result }) => {
      if (!lying || !signed) return result;
      if (method === 'eth_blockNumber') latest = BigInt(result as string);
      if (method === 'eth_getTransactionReceipt' && result) return { ...(result as object), status: '0x0' };
      const filter = params[0] as { topics?: (string | null)[]; toBlock?: string } | undefined;
      if (method !== 'eth_getLogs' || filter?.topics?.[0] !== canceledTopics()[0]) return result;
      // A cancel in the newest block, answered to a search that reaches it.
      if (!filter.toBlock || BigInt(filter.toBlock) < latest) return result;
      return [
        {
          address: app.chain.usdc,
          topics: canceledTopics(),
          data: '0x',
          blockNumber: toHex(latest),
          blockHash: `0x${'ab'.repeat(32)}`,
          transactionHash: `0x${'cd'.repeat(32)}`,
          transactionIndex: '0x0',
          logIndex: '0x0',
          removed: false,
        },
      ];
    });
    const liar = await twoConfirmationsThrough(rewriter.url);
    try {
      for (const [path, decidedBy] of [
        ['/reconcile/fork-cancel-request', 'request'],
        ['/reconcile/fork-cancel-reconciler', 'reconciler'],
      ] as const) {
        lying = true;
        const gate = await openGate(liar, site, path);
        const payment = await signPayment(app, agent, gate);
        signed = toSignedAuthorization(payment.payload as never);
        if (decidedBy === 'reconciler') {
          await leftToReconciler(gate, payment);
          expect(await reconcile(liar)).toMatchObject({ released: 0 });
        } else {
          // Blocks keep coming while the request waits for its receipt's two confirmations.
          const miner = setInterval(() => void mineBlocks(app.chain.rpcUrl, 1).catch(() => undefined), 200);
          const first = await liar
            .call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } })
            .finally(() => clearInterval(miner));
          expect([first.status, first.body.detail]).toEqual([202, expect.any(String)]);
        }
        expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(1);
        lying = false;
        await mineBlocks(app.chain.rpcUrl, 2);
        expect(await reconcile(liar)).toMatchObject({ finalized: 1, released: 0 });
        const paid = await liar.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
        expect([path, paid.status]).toEqual([path, 200]);
      }
    } finally {
      await liar.app.close();
      await rewriter.close();
    }
  }, 60_000);

  it('judges an authorization expired by the newest confirmed block, not a head a fork stamps past its end: a claim that paid is not released', async () => {
    // A node whose newest block (another fork's) is stamped a day ahead and holds neither our
    // settlement nor the authorization's use; the block before it is the chain everyone agrees on.
    let lying = true;
    const authorizationState = toFunctionSelector('authorizationState(address,bytes32)');
    const rewriter = await startRpcRewriter(app.chain.rpcUrl, ({ method, params, result }) => {
      if (!lying || !result) return result;
      if (method === 'eth_getTransactionReceipt' || method === 'eth_getTransactionByHash') return null;
      if (method === 'eth_call' && (params[0] as { data?: string }).data?.startsWith(authorizationState))
        return `0x${'0'.repeat(64)}`;
      if (method === 'eth_getBlockByNumber' && params[0] === 'latest') {
        const block = result as { timestamp: string };
        return { ...block, timestamp: toHex(BigInt(block.timestamp) + 86_400n) };
      }
      return result;
    });
    const liar = await twoConfirmationsThrough(rewriter.url);
    try {
      const gate = await openGate(liar, site, '/reconcile/fork-expired');
      const payment = await signPayment(app, agent, gate);
      await leftToReconciler(gate, payment);
      expect(await reconcile(liar)).toMatchObject({ released: 0 });
      expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(1);

      lying = false;
      expect(await reconcile(liar)).toMatchObject({ finalized: 1, released: 0 });
      expect((await liar.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } })).status).toBe(200);
    } finally {
      await liar.app.close();
      await rewriter.close();
    }
  });

  it('answers 503 while the chain is unreachable, charges nothing and keeps the gate payable', async () => {
    const offline = await startTestApp({ database: db.database, masterKey, chainRpcUrl: 'http://127.0.0.1:9' });
    const gate = await openGate(offline, site, '/reconcile/offline');
    const response = await offline.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, agent, gate) },
    });
    expect(response.status).toBe(503);
    expect(response.body.detail).toMatch(/unreachable/);
    expect((await offline.call('GET', `/v1/gates/${gate.id}`)).body.status).toBe('open');
    expect(await app.database.prisma.payment.count({ where: { gateId: gate.ref } })).toBe(0);
    await offline.app.close();

    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, agent, gate) },
    });
    expect(paid.status).toBe(200);
  });

  it('reaches every open payment within a bounded number of passes, however many others stay open', async () => {
    const publisherId = (await app.database.prisma.site.findUniqueOrThrow({ where: { id: site.siteId } })).publisherId;
    // 150 older claims it can never finish (their authorization is unreadable), ahead of an honest one.
    await app.database.prisma.payment.createMany({
      data: Array.from({ length: 150 }, (_, i) => ({
        gateId: crypto.randomUUID(),
        siteId: site.siteId,
        publisherId,
        url: `/reconcile/stuck/${i}`,
        method: 'authorization' as const,
        status: 'submitting' as const,
        chainId: app.chain.chainId,
        asset: app.chain.usdc,
        payer: newWallet().address.toLowerCase(),
        payTo: payTo.toLowerCase(),
        amount: 10_000n,
        nonce: `0x${crypto.randomUUID().replace(/-/g, '').padEnd(64, '0')}`,
        authorization: { from: 'not an address' },
        createdAt: new Date(Date.now() - 3_600_000),
      })),
    });
    const { gate, signed } = await claimedButNeverSent('/reconcile/behind-stuck');
    // Passes that ran: on PostgreSQL another test file's reconciler may hold the (database-wide) lock.
    const passes = async (count: number) => {
      const reports: Awaited<ReturnType<typeof reconcile>>[] = [];
      for (const started = Date.now(); reports.length < count && Date.now() - started < 30_000;) {
        const report = await reconcile(app);
        if (report.skipped) await new Promise((resolve) => setTimeout(resolve, 50));
        else reports.push(report);
      }
      return reports;
    };
    // 151 open rows, 100 a pass: the honest one is reached by the second pass that runs.
    expect((await passes(2)).some((report) => report.resubmitted > 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await passes(2);
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: signed } });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    await app.database.prisma.payment.deleteMany({ where: { url: { startsWith: '/reconcile/stuck/' } } });
  });
});
