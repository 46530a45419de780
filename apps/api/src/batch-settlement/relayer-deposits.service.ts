import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Hash, Hex } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { logRepricing, repriceIfStuck } from '../chain/fee-bump';
import { sentTransactionFate } from '../chain/transaction-state';
import { CHAIN } from '../chain/tokens';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { ChannelStore, type SentDeposit } from './channel.store';
import { whyDepositReverted } from './reverted-deposit';

/**
 * The deposits the relayer sent for payers (written down once signed: channel_deposits), followed
 * in the background by a job of their own at the reconciler's interval: like a refund, a deposit is
 * sent by a request that may stop waiting for it, and stuck under the chain's fees it holds every
 * later relayer transaction behind its nonce. One pending too long is re-priced up to
 * RELAYER_MAX_FEE_PER_GAS_WEI (repriceIfStuck), its replacement written down first; one mined is
 * recorded landed, one that never lands dropped, and one that reverted dropped with its payer
 * refused (RelayRefusalsStore) unless a copy spent its authorization first, as its request does
 * when it sees the revert itself. Ahead of an urgent claim, StuckAheadService lifts one further.
 */
@Injectable()
export class RelayerDepositsService {
  private readonly logger = new Logger('Deposits');

  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly store: ChannelStore,
    private readonly refusals: RelayRefusalsStore,
  ) {}

  /** Goes through every deposit on its way; one that fails is logged and tried again at the next run. */
  async followOnTheirWay(): Promise<void> {
    if (!this.chain.batchSettlement) return;
    for (const sent of await this.store.depositsOnTheirWay(this.chain.chainId))
      await this.follow(sent).catch((error: Error) =>
        this.logger.warn(`deposit ${sent.txHash} not followed; the next run tries again: ${error.message}`),
      );
  }

  private async follow(sent: SentDeposit): Promise<void> {
    const chainId = this.chain.chainId;
    const fate = await sentTransactionFate(this.chain, sent);
    if (fate === 'landed') return this.store.recordDepositLanded(chainId, sent.txHash);
    // The payer made it revert: its deposits are not relayed for a while (whyDepositReverted).
    if (fate === 'reverted' && (await this.whyReverted(sent)) === 'payer')
      await this.refusals.refuse(chainId, sent.payer, sent.txHash);
    if (fate === 'reverted' || fate === 'dead') return this.store.dropDeposit(chainId, sent.txHash);
    if (fate !== 'pending') return;
    const hash = sent.txHash as Hash;
    const repricing = await repriceIfStuck(this.chain, hash, sent.createdAt, (replacement) =>
      this.store.recordDepositReplacement(chainId, sent.txHash, replacement),
    );
    logRepricing(this.logger, 'the deposit', hash, repricing);
  }

  /** Why the reverted deposit `sent` reverted, judged at the block it was mined in. */
  private async whyReverted(sent: SentDeposit) {
    const { blockNumber } = await this.chain.publicClient.getTransactionReceipt({ hash: sent.txHash as Hash });
    const relayed = {
      channelId: sent.channelId as Hex,
      payer: sent.payer as Hex,
      nonce: sent.authorizationNonce as Hex,
      amount: sent.amount ?? undefined,
      validBefore: sent.validBefore ?? undefined,
    };
    return whyDepositReverted(this.chain, this.chain.batchSettlement!, relayed, blockNumber);
  }
}
