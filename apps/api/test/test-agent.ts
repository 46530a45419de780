import {
  buildAuthorization,
  DEFAULT_CHAIN_ID,
  devPublicClient,
  devTestClient,
  devWalletClient,
  revert,
  signAuthorization,
  signCancelAuthorization,
  testBundlerAbi,
  testBundlerBytecode,
  testUsdcAbi,
  testWalletAbi,
  testWalletBytecode,
  usdcDomain,
  type TransferAuthorization,
} from '@crawlgate/devchain';
import {
  exactPaymentV1,
  formatWalletProof,
  MAX_AUTHORIZATION_SECONDS,
  paymentHistoryMessage,
  USDC_ABI,
  WALLET_PROOF_MAX_SECONDS,
} from '@crawlgate/core';
import { createWalletClient, encodeFunctionData, http, type Hash, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { openGate, type TestSite } from './fixtures';
import type { TestApp } from './test-app';

/** A fresh wallet with no history: balances and nonces start from zero in every test. */
export function newWallet(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

/**
 * The headers of GET /v1/agents/me/payments of `app` for `address` (the signer's own, unless given:
 * a contract wallet's), with the signer's X-Wallet-Proof expiring `expires` (Unix seconds; by default
 * as far ahead as allowed) of `message` (by default the one the API expects).
 */
export async function historyHeaders(
  app: Pick<TestApp, 'baseUrl'>,
  signer: PrivateKeyAccount,
  {
    address = signer.address,
    expires = Math.floor(Date.now() / 1000) + WALLET_PROOF_MAX_SECONDS,
    message = paymentHistoryMessage(address, new URL(app.baseUrl).origin, expires),
  }: { address?: string; expires?: number; message?: string } = {},
): Promise<Record<string, string>> {
  const signature = await signer.signMessage({ message });
  return { 'x-wallet-address': address, 'x-wallet-proof': formatWalletProof(expires, signature) };
}

/** Mints test USDC through the API's local faucet. */
export async function fundUsdc(app: Pick<TestApp, 'call'>, address: string, amountUsd: string): Promise<void> {
  const response = await app.call('POST', '/v1/dev/faucet', { body: { address, amount_usd: amountUsd } });
  if (response.status !== 200) throw new Error(`faucet failed: ${response.status} ${JSON.stringify(response.body)}`);
}

/** Gas money, for agents that send their own transfer (the tx-hash path). */
export async function fundEth(app: Pick<TestApp, 'chain'>, address: `0x${string}`): Promise<void> {
  await devTestClient(app.chain.rpcUrl).setBalance({ address, value: 10n ** 18n });
}

export async function usdcBalance(app: Pick<TestApp, 'chain'>, address: `0x${string}`): Promise<bigint> {
  return app.chain.publicClient.readContract({
    address: app.chain.usdc,
    abi: USDC_ABI,
    functionName: 'balanceOf',
    args: [address],
  });
}

/** A wallet client sending from `account` on the app's chain (paying its own gas: fundEth). */
export function walletOf(app: Pick<TestApp, 'chain'>, account: PrivateKeyAccount) {
  return createWalletClient({ account, chain: app.chain.relayer.chain, transport: http(app.chain.rpcUrl) });
}

/** A token transfer (USDC unless `asset` is named) sent from `from` and mined: its hash, as a tx-hash payer proves it. */
export async function sendUsdc(
  app: Pick<TestApp, 'chain'>,
  from: PrivateKeyAccount,
  to: Hex,
  value: bigint,
  asset: Hex = app.chain.usdc,
): Promise<Hash> {
  const hash = await walletOf(app, from).writeContract({
    address: asset,
    abi: USDC_ABI,
    functionName: 'transfer',
    args: [to, value],
  });
  await app.chain.publicClient.waitForTransactionReceipt({ hash });
  return hash;
}

/**
 * `count` one-log USDC transfers (1 unit each, to fresh addresses) from `from` (funded with USDC and
 * gas), with a tip far above what the relayer and the test relays pay: mined first in the next
 * block, while automine is off. Their hashes.
 */
export async function sendTransfersAhead(app: Pick<TestApp, 'chain'>, from: PrivateKeyAccount, count: number) {
  const nonce = await app.chain.publicClient.getTransactionCount({ address: from.address });
  const hashes: Hash[] = [];
  for (let i = 0; i < count; i++)
    hashes.push(
      await walletOf(app, from).writeContract({
        address: app.chain.usdc,
        abi: USDC_ABI,
        functionName: 'transfer',
        args: [newWallet().address, 1n],
        gas: 100_000n,
        nonce: nonce + i,
        maxFeePerGas: 400_000_000_000n,
        maxPriorityFeePerGas: 200_000_000_000n,
      } as never),
    );
  return hashes;
}

/**
 * A reorg moving a mined transaction within its block: the chain goes back to `snapshot` (taken
 * before the block that mined it), then one block mines it again (its hash, read back from the
 * node) behind `transfersAhead` (1) USDC transfers from `ahead` (funded with USDC and gas) with a
 * higher tip, so every log of the transaction sits at another index.
 */
export async function mineAgainBehindAnother(
  app: Pick<TestApp, 'chain'>,
  {
    hash,
    snapshot,
    ahead,
    transfersAhead = 1,
  }: { hash: Hash; snapshot: Hex; ahead: PrivateKeyAccount; transfersAhead?: number },
): Promise<void> {
  const raw: Hex = await app.chain.publicClient.request({ method: 'eth_getRawTransactionByHash', params: [hash] });
  await revert(app.chain.rpcUrl, snapshot);
  const chain = devTestClient(app.chain.rpcUrl);
  await chain.setAutomine(false);
  try {
    await sendTransfersAhead(app, ahead, transfersAhead);
    // Back in the node's pool after the revert, or sent again.
    await app.chain.publicClient.sendRawTransaction({ serializedTransaction: raw }).catch(() => undefined);
    await chain.mine({ blocks: 1 });
  } finally {
    await chain.setAutomine(true);
  }
}

export interface GateOfferBody {
  id: string;
  amount: string;
  pay_to: `0x${string}`;
  accepts: { network: string; payTo: string; maxAmountRequired: string }[];
}

export type Tamper = Partial<TransferAuthorization> & { network?: string; signer?: PrivateKeyAccount };

/** An EIP-3009 authorization paying `offer`, as an x402 client signs it (valid for the longest we accept), with optional tampering. */
export async function signOffer(
  app: Pick<TestApp, 'chain'>,
  wallet: PrivateKeyAccount,
  offer: GateOfferBody,
  tamper: Tamper = {},
) {
  const { network: _, signer, ...fields } = tamper;
  const authorization: TransferAuthorization = {
    ...buildAuthorization({
      from: wallet.address,
      to: offer.pay_to,
      value: BigInt(offer.amount),
      validForSeconds: MAX_AUTHORIZATION_SECONDS,
    }),
    ...fields,
  };
  const signature = await signAuthorization(
    signer ?? wallet,
    usdcDomain(app.chain.chainId, app.chain.usdc),
    authorization,
  );
  return { authorization, signature };
}

/** What an x402 v1 client sends in X-PAYMENT for an offer (decoded), with optional tampering. */
export async function signPayment(
  app: Pick<TestApp, 'chain'>,
  wallet: PrivateKeyAccount,
  offer: GateOfferBody,
  tamper: Tamper = {},
) {
  const { authorization, signature } = await signOffer(app, wallet, offer, tamper);
  return exactPaymentV1(tamper.network ?? offer.accepts[0].network, authorization, signature);
}

/**
 * Sends a signed payment's authorization from a fresh wallet of its own, as anyone who read it
 * (from a 402 exchange, or from calldata) can; the transaction's hash, not waited for.
 */
export async function sendAuthorizationAsStranger(
  app: Pick<TestApp, 'chain'>,
  payment: Awaited<ReturnType<typeof signPayment>>,
): Promise<Hash> {
  const stranger = await strangerClient(app);
  return stranger.writeContract({ address: app.chain.usdc, abi: USDC_ABI, ...settlementArgs(payment) });
}

/**
 * The payer's cancel of its authorization of `nonce` (EIP-3009 cancelAuthorization, signed by the
 * payer), sent by a stranger, as anyone holding it can send it; the hash of its transaction.
 */
export async function sendCancelAsStranger(
  app: Pick<TestApp, 'chain'>,
  payer: PrivateKeyAccount,
  nonce: Hex,
): Promise<Hash> {
  const domain = usdcDomain(app.chain.chainId, app.chain.usdc);
  const signature = await signCancelAuthorization(payer, domain, payer.address, nonce);
  const stranger = await strangerClient(app);
  return stranger.writeContract({
    address: app.chain.usdc,
    abi: testUsdcAbi,
    functionName: 'cancelAuthorization',
    args: [payer.address, nonce, signature],
  });
}

/**
 * A stranger's multicall contract (TestBundler), deployed and mined now. `send` relays several
 * signed payments' authorizations in one transaction, as anyone who read them can, with the fees
 * given; its hash, not waited for (automine may be off).
 */
export async function strangersBundler(app: Pick<TestApp, 'chain'>) {
  const stranger = await strangerClient(app);
  const deployed = await app.chain.publicClient.waitForTransactionReceipt({
    hash: await stranger.deployContract({ abi: testBundlerAbi, bytecode: testBundlerBytecode }),
  });
  const send = (
    payments: Awaited<ReturnType<typeof signPayment>>[],
    fees: { gas?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } = {},
  ) =>
    stranger.writeContract({
      address: deployed.contractAddress!,
      abi: testBundlerAbi,
      functionName: 'callAll',
      args: [
        payments.map(() => app.chain.usdc),
        payments.map((payment) => encodeFunctionData({ abi: USDC_ABI, ...settlementArgs(payment) })),
      ],
      ...fees,
    });
  return { send };
}

/** Several signed payments' authorizations sent in one transaction by a stranger (strangersBundler); the hash once mined. */
export async function sendAuthorizationsBundled(
  app: Pick<TestApp, 'chain'>,
  payments: Awaited<ReturnType<typeof signPayment>>[],
): Promise<Hash> {
  const hash = await (await strangersBundler(app)).send(payments);
  await app.chain.publicClient.waitForTransactionReceipt({ hash });
  return hash;
}

/**
 * A smart-contract wallet (TestWallet: ERC-1271, its owner's ECDSA signatures) for `owner`, holding
 * `usd` of test USDC; the owner gets gas to deploy and drive it. Its address.
 */
export async function deployTestWallet(
  app: Pick<TestApp, 'chain' | 'call'>,
  owner: PrivateKeyAccount,
  usd = '1',
): Promise<`0x${string}`> {
  await fundEth(app, owner.address);
  const wallet = await deployWalletContract(app.chain.rpcUrl, app.chain.relayer.chain.id, owner);
  await fundUsdc(app, wallet, usd);
  return wallet;
}

/**
 * A smart-contract wallet (TestWallet) for a new owner on the anvil at `rpcUrl`, with no API: the
 * owner's gas is set on anvil, and the wallet holds nothing. The owner and the wallet's address.
 */
export async function deployBareTestWallet(rpcUrl: string): Promise<{ owner: PrivateKeyAccount; wallet: Hex }> {
  const owner = newWallet();
  await devTestClient(rpcUrl).setBalance({ address: owner.address, value: 10n ** 18n });
  return { owner, wallet: await deployWalletContract(rpcUrl, DEFAULT_CHAIN_ID, owner) };
}

/** Deploys a TestWallet for `owner`, who pays its gas; its address. */
async function deployWalletContract(rpcUrl: string, chainId: number, owner: PrivateKeyAccount): Promise<Hex> {
  const hash = await devWalletClient(rpcUrl, chainId, owner).deployContract({
    abi: testWalletAbi,
    bytecode: testWalletBytecode,
    args: [owner.address],
  } as never);
  return (await devPublicClient(rpcUrl).waitForTransactionReceipt({ hash })).contractAddress!;
}

async function strangerClient(app: Pick<TestApp, 'chain'>) {
  const stranger = newWallet();
  await fundEth(app, stranger.address);
  return walletOf(app, stranger);
}

/** transferWithAuthorization's name and arguments for a signed payment, as anyone holding it sends it. */
export function settlementArgs(payment: Awaited<ReturnType<typeof signPayment>>) {
  const auth = payment.payload.authorization;
  return {
    functionName: 'transferWithAuthorization' as const,
    args: [
      auth.from,
      auth.to,
      BigInt(auth.value),
      BigInt(auth.validAfter),
      BigInt(auth.validBefore),
      auth.nonce,
      payment.payload.signature,
    ] as const,
  };
}

/** Transfer events of our USDC into `to`, counted on chain: the truth about what was charged. */
export async function transfersTo(
  app: Pick<TestApp, 'chain'>,
  to: `0x${string}`,
): Promise<{ from: string; value: bigint; hash: string }[]> {
  const logs = await app.chain.publicClient.getContractEvents({
    address: app.chain.usdc,
    abi: USDC_ABI,
    eventName: 'Transfer',
    args: { to },
    fromBlock: 0n,
  });
  return logs.map((log) => ({ from: log.args.from!, value: log.args.value!, hash: log.transactionHash }));
}

/**
 * A fresh payer funded with `fundUsd`, a gate of `site` for each of `paths` and its payment of
 * each; `verify(i)` posts the i-th, `relayerSent()` counts the relayer's transactions since (its
 * pending nonce: broadcasts the node took, mined or not).
 */
export async function paymentsOfOnePayer(app: TestApp, site: TestSite, fundUsd: string, paths: string[]) {
  const agent = newWallet();
  await fundUsdc(app, agent.address, fundUsd);
  const gates = await Promise.all(paths.map((path) => openGate(app, site, path)));
  const payments = await Promise.all(gates.map((gate) => signPayment(app, agent, gate)));
  const relayerNonce = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
  const sentBefore = await relayerNonce();
  return {
    agent,
    gates,
    payments,
    verify: (i: number) => app.call('POST', `/v1/gates/${gates[i].id}/verify`, { body: { payment: payments[i] } }),
    relayerSent: async () => (await relayerNonce()) - sentBefore,
  };
}
