import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Hash, Hex } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { logRepricing, repriceIfStuck } from '../chain/fee-bump';
import { sentTransactionFate } from '../chain/transaction-state';
import { CHAIN } from '../chain/tokens';
import { authorizationSpentBy, minedPastValidity } from '../chain/escrow';
import { isAuthorizationUsed } from '../payments/authorization-checks';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { ChannelStore, type SentDeposit } from './channel.store';

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
    // The payer made it revert (its authorization cancelled or spent otherwise, as the token's events
    // show): its deposits are not relayed for a while. Not when a copy of it (anyone may call the
    // escrow's deposit) made the deposit first, nor when no event says (a node's gap).
    if (fate === 'reverted' && (await this.madeToRevert(sent)))
      await this.refusals.refuse(chainId, sent.payer, sent.txHash);
    if (fate === 'reverted' || fate === 'dead') return this.store.dropDeposit(chainId, sent.txHash);
    if (fate !== 'pending') return;
    const hash = sent.txHash as Hash;
    const repricing = await repriceIfStuck(this.chain, hash, sent.createdAt, (replacement) =>
      this.store.recordDepositReplacement(chainId, sent.txHash, replacement),
    );
    logRepricing(this.logger, 'the deposit', hash, repricing);
  }

  /**
   * Whether the payer made the reverted deposit `sent` revert: mined before its authorization expired,
   * with the authorization unused (the funds moved) or spent otherwise than by a copy's deposit, as
   * the token's events up to its block show.
   */
  private async madeToRevert(sent: SentDeposit): Promise<boolean> {
    const { blockNumber } = await this.chain.publicClient.getTransactionReceipt({ hash: sent.txHash as Hash });
    // Mined too late, the token refused it for its age: the payer moved nothing.
    if (sent.validBefore && (await minedPastValidity(this.chain, blockNumber, sent.validBefore))) return false;
    if (!(await isAuthorizationUsed(this.chain, sent.payer as Hex, sent.authorizationNonce as Hex))) return true;
    const spentBy = await authorizationSpentBy(
      this.chain,
      this.chain.batchSettlement!,
      {
        payer: sent.payer as Hex,
        nonce: sent.authorizationNonce as Hex,
        channelId: sent.channelId as Hex,
        amount: sent.amount ?? undefined,
      },
      blockNumber,
    );
    return spentBy === 'spent-otherwise';
  }
}
