import {
  batchSettlementAbi,
  channelIdOf,
  devWalletClient,
  signErc3009Deposit,
  signVoucher,
  usdcDomain,
  type ChannelConfig,
} from '@crawlgate/devchain';
import {
  BATCH_SETTLEMENT_ABI,
  batchSettlementDomain,
  decodeBase64Json,
  type PaymentRequirementsV2,
} from '@crawlgate/core';
import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { TestSite } from './fixtures';
import type { TestApp } from './test-app';

/*
 * An x402 batch-settlement payer for API tests, signing as x402's client does (ChannelConfig with
 * the payer as its own payer authorizer, EIP-3009 deposits to the collector, cumulative vouchers),
 * with every field open to tampering.
 */

export interface BatchOffer {
  id: string;
  accepted: PaymentRequirementsV2;
}

/** The batch-settlement requirement of a gate (v2 form, from its PAYMENT-REQUIRED header). */
export function batchOffer(response: { body: any; headers: Headers }): BatchOffer {
  const required = decodeBase64Json(response.headers.get('payment-required')!) as { accepts: PaymentRequirementsV2[] };
  const accepted = required.accepts.find((a) => a.scheme === 'batch-settlement');
  if (!accepted) throw new Error('the gate offers no batch-settlement');
  return { id: response.body.id, accepted };
}

/** A new gate of `site` (POST /v1/gates, a fresh page unless `url` is named), as its batch-settlement offer. */
export async function batchGate(app: Pick<TestApp, 'call'>, site: TestSite, url = `/article/${randomUUID()}`) {
  return batchOffer(
    await app.call('POST', '/v1/gates', { body: { url }, headers: { 'x-site-token': site.siteToken } }),
  );
}

export function testChannel(
  app: Pick<TestApp, 'chain'>,
  payer: PrivateKeyAccount,
  accepted: PaymentRequirementsV2,
  overrides: Partial<ChannelConfig> = {},
) {
  const batch = app.chain.batchSettlement!;
  const domain = batchSettlementDomain(app.chain.chainId, batch.escrow);
  const extra = accepted.extra as { receiverAuthorizer: Hex; withdrawDelay: number };
  const config: ChannelConfig = {
    payer: payer.address,
    payerAuthorizer: payer.address,
    receiver: accepted.payTo as Hex,
    receiverAuthorizer: extra.receiverAuthorizer,
    token: accepted.asset as Hex,
    withdrawDelay: extra.withdrawDelay,
    salt: `0x${'00'.repeat(32)}`,
    ...overrides,
  };
  const channelId = channelIdOf(domain, config);
  return {
    config,
    channelId,
    domain,
    voucher: async (amount: bigint, signer: PrivateKeyAccount = payer, id: Hex = channelId) => ({
      channelId: id,
      maxClaimableAmount: amount.toString(),
      signature: await signVoucher(signer, domain, id, amount),
    }),
    /** The PAYMENT-SIGNATURE object for `offer`: a voucher alone, or with a deposit of `deposit`. */
    async payment(
      offer: BatchOffer,
      amount: bigint,
      options: {
        deposit?: bigint;
        voucher?: { channelId: Hex; maxClaimableAmount: string; signature: Hex };
        salt?: bigint;
      } = {},
    ) {
      const voucher = options.voucher ?? (await this.voucher(amount));
      const payload: Record<string, unknown> = {
        type: options.deposit ? 'deposit' : 'voucher',
        channelConfig: config,
        voucher,
      };
      if (options.deposit) {
        const salt = options.salt ?? BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000));
        const d = await signErc3009Deposit({
          payer,
          tokenDomain: usdcDomain(app.chain.chainId, app.chain.usdc),
          collector: batch.collector,
          channelId,
          amount: options.deposit,
          salt,
        });
        payload.deposit = {
          amount: options.deposit.toString(),
          authorization: {
            erc3009Authorization: {
              validAfter: d.validAfter.toString(),
              validBefore: d.validBefore.toString(),
              salt: `0x${salt.toString(16).padStart(64, '0')}`,
              signature: d.signature,
            },
          },
        };
      }
      return { x402Version: 2, accepted: offer.accepted, payload };
    },
  };
}

/** The high-s twin of a 65-byte signature: same signer for a lenient verifier, refused by the escrow. */
export function malleate(signature: Hex): Hex {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  return `${signature.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
}

/** The escrow's `channels` ([balance, totalClaimed]) or `refundNonce` of a channel, at `blockNumber` or the latest block. */
export function escrowRead<T>(
  app: Pick<TestApp, 'chain'>,
  functionName: 'channels' | 'refundNonce',
  channelId: Hex,
  blockNumber?: bigint,
): Promise<T> {
  return app.chain.publicClient.readContract({
    address: app.chain.batchSettlement!.escrow,
    abi: BATCH_SETTLEMENT_ABI,
    functionName,
    args: [channelId],
    blockNumber,
  }) as Promise<T>;
}

/** The payer starts withdrawing `amount` of its channel (the escrow's initiateWithdraw), and waits for it to be mined. */
export function startWithdrawal(
  app: Pick<TestApp, 'chain'>,
  payer: PrivateKeyAccount,
  config: ChannelConfig,
  amount: bigint,
): Promise<void> {
  return payerCallsEscrow(app, payer, 'initiateWithdraw', [config, amount]);
}

/** The payer's own call of the escrow (a withdrawal started or finished), mined. */
export async function payerCallsEscrow(
  app: Pick<TestApp, 'chain'>,
  payer: PrivateKeyAccount,
  functionName: 'initiateWithdraw' | 'finalizeWithdraw',
  args: readonly unknown[],
): Promise<void> {
  const wallet = devWalletClient(app.chain.rpcUrl, app.chain.chainId, payer);
  const hash = await wallet.writeContract({
    address: app.chain.batchSettlement!.escrow,
    abi: batchSettlementAbi,
    functionName,
    args,
  } as never);
  await app.chain.publicClient.waitForTransactionReceipt({ hash });
}
