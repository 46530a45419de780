import {
  encodeBase64Json,
  exactAuthorization,
  exactPaymentV1,
  exactPaymentV2,
  transferProofMessage,
  transferWithAuthorizationTypedData,
  USDC_ABI,
} from '@crawlgate/core';
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  keccak256,
  parseEventLogs,
  type EncodeFunctionDataParameters,
  type TransactionReceipt,
  type TransactionSerializable,
  type Account,
  type Hash,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TypedDataDefinition,
  type WalletClient,
} from 'viem';
import type { Offer } from './offers';

/** What paying needs from the agent's wallet, whether it came as a viem LocalAccount or a WalletClient. */
export interface Payer {
  address: `0x${string}`;
  /** An x402 payment header (name and base64 value) carrying a signed EIP-3009 authorization. */
  paymentHeader(offer: Offer): Promise<[name: string, value: string]>;
  /**
   * Sends USDC to the offer's pay_to and waits for the receipt. `onSent` hears what is known of
   * the transaction before it may have left (SentTransfer), and again once its hash is.
   */
  transfer(offer: Offer, onSent: (sent: SentTransfer) => void): Promise<Hash>;
  /** What became of a transfer whose outcome was not learned (TransferFate). */
  transferFate(sent: SentTransfer): Promise<TransferFate>;
  /** Signs (EIP-191) that transfer `txHash` pays gate `gateRef`: a hash alone proves nothing about who posts it. */
  signTransferProof(gateRef: string, txHash: Hash): Promise<Hex>;
  /** EIP-191 (personal_sign) with the agent's key (the proof that opens its payment history). */
  signMessage(message: string): Promise<Hex>;
  /** EIP-712 with the agent's key (a voucher, a deposit authorization). */
  signTypedData(typedData: TypedDataDefinition): Promise<Hex>;
  /** Clients that send the agent's own transactions (a withdrawal): rpcUrl or the WalletClient's transport. */
  chain(): { wallet: WalletClient; public: PublicClient };
  /**
   * Runs `send`, one transaction's broadcast, once the agent's earlier ones are sent: sent at once,
   * two transactions take the same pending nonce, and the node refuses one.
   */
  inTurn<T>(send: () => Promise<T>): Promise<T>;
}

/**
 * A transfer that may have left: its hash (known before the broadcast when the agent signs it, a
 * local key; else from the node's answer) and the nonce it was signed with (a local key's).
 */
export interface SentTransfer {
  hash?: Hash;
  nonce?: number;
}

/**
 * A sent transfer's fate on the chain: mined, reverted, never (a local key's: the nonce it was
 * signed with was taken by another transaction and no node knows it, so it can no longer be mined),
 * or unknown (pending, dropped but still sendable, a WalletClient's whose hash or nonce is not
 * known, or the node did not say).
 */
export type TransferFate = { kind: 'mined'; hash: Hash } | { kind: 'reverted' | 'never' | 'unknown' };

/** A transfer that failed before it was sent (its gas estimate): it surely moved nothing. */
export class TransferNotSent extends Error {
  constructor(cause: unknown) {
    super(`USDC transfer not sent: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'TransferNotSent';
  }
}

/** A transfer mined and reverted: it surely moved nothing either. */
export class TransferReverted extends Error {
  constructor(readonly hash: Hash) {
    super(`USDC transfer ${hash} reverted`);
    this.name = 'TransferReverted';
  }
}

export interface PayerOptions {
  rpcUrl: string | undefined;
  pollingIntervalMs: number;
  /** The longest an authorization stays valid, whatever the site's maxTimeoutSeconds. */
  maxAuthorizationSeconds: number;
}

/**
 * The last transaction sent (or failing) per sending address, in this process: the agents of one
 * process sharing a wallet send in turn too. Processes sharing one do not (their transfers may
 * take the same nonce, and one fails, its price counted as spent).
 */
const sendsByAddress = new Map<string, Promise<unknown>>();

export function createPayer(
  account: LocalAccount | WalletClient,
  { rpcUrl, pollingIntervalMs, maxAuthorizationSeconds }: PayerOptions,
): Payer {
  const signer: Account | undefined =
    'signTypedData' in account && 'address' in account && !('transport' in account)
      ? (account as LocalAccount)
      : (account as WalletClient).account;
  if (!signer) throw new Error('createAgent: the WalletClient has no account');
  const address = signer.address;

  const wallet = (): WalletClient => {
    if ('transport' in account) return account as WalletClient;
    if (!rpcUrl)
      throw new Error(
        'createAgent: sending transactions (payMode "transfer", a withdrawal) with a LocalAccount needs rpcUrl',
      );
    return createWalletClient({ account: signer, transport: http(rpcUrl) });
  };
  const signTypedData = (typedData: TypedDataDefinition): Promise<Hex> =>
    'transport' in account
      ? (account as WalletClient).signTypedData({ ...typedData, account: signer })
      : (account as LocalAccount).signTypedData(typedData);

  const signMessage = (message: string): Promise<Hex> =>
    'transport' in account
      ? (account as WalletClient).signMessage({ account: signer, message })
      : (account as LocalAccount).signMessage({ message });

  const inTurn = <T>(send: () => Promise<T>): Promise<T> => {
    const key = address.toLowerCase();
    const sent = (sendsByAddress.get(key) ?? Promise.resolve()).then(send, send);
    const settled = sent.catch(() => undefined);
    sendsByAddress.set(key, settled);
    void settled.then(() => sendsByAddress.get(key) === settled && sendsByAddress.delete(key));
    return sent;
  };

  /**
   * Broadcasts a prepared transfer, what is known of it said to `onSent` before it may leave: when
   * the agent signs it (a local key), its hash and nonce, so that a broadcast whose answer is lost
   * is still asked about, and never sent twice.
   */
  const sendTransfer = async (
    client: WalletClient,
    call: Parameters<WalletClient['writeContract']>[0] & { gas: bigint },
    onSent: (sent: SentTransfer) => void,
  ): Promise<Hash> => {
    if (signer.type !== 'local') {
      // Its nonce is the wallet's to pick (some ignore one given): unknown here, so such a transfer
      // whose answer was lost is never judged unmineable (TransferFate 'never').
      onSent({});
      const hash = await client.writeContract(call);
      onSent({ hash });
      return hash;
    }
    let signed: Hex;
    let nonce: number;
    try {
      const request = await client.prepareTransactionRequest({
        account: signer,
        chain: null,
        to: call.address,
        data: encodeFunctionData(call as EncodeFunctionDataParameters),
        gas: call.gas,
      });
      nonce = request.nonce;
      signed = await signer.signTransaction(request as TransactionSerializable);
    } catch (error) {
      throw new TransferNotSent(error);
    }
    const hash = keccak256(signed);
    onSent({ hash, nonce });
    await client.sendRawTransaction({ serializedTransaction: signed });
    return hash;
  };

  /**
   * TransferFate, read in an order no transfer mined meanwhile escapes: the mined nonce count
   * first, then its receipt. Past the nonce it was signed with, with no receipt and no node knowing
   * it, it never will be mined; one without that nonce (a WalletClient's) is only ever found mined
   * or not yet.
   */
  const transferFate = async (sent: SentTransfer): Promise<TransferFate> => {
    const chain = publicFor(wallet());
    try {
      const mined = await chain.getTransactionCount({ address, blockTag: 'latest' });
      const hash = sent.hash;
      if (hash) {
        const receipt = await chain.getTransactionReceipt({ hash }).catch((error: unknown) => {
          if ((error as Error).name === 'TransactionReceiptNotFoundError') return null;
          throw error;
        });
        if (receipt) return receipt.status === 'success' ? { kind: 'mined', hash } : { kind: 'reverted' };
        // A node behind the one that counted may still hold it pending: never only once none knows it.
        const known = await chain.getTransaction({ hash }).then(
          () => true,
          (error: unknown) => {
            if ((error as Error).name === 'TransactionNotFoundError') return false;
            throw error;
          },
        );
        if (known) return { kind: 'unknown' };
      }
      // Only a nonce the agent signed with tells that another transaction took its place.
      return sent.nonce !== undefined && mined > sent.nonce ? { kind: 'never' } : { kind: 'unknown' };
    } catch {
      return { kind: 'unknown' };
    }
  };

  /**
   * Whether a receipt carries this payer's USDC Transfer of the offer's amount to its pay_to: a
   * wallet's re-priced copy of the transfer ("speed up"), whose receipt viem gives as the transfer's.
   */
  const paysOffer = (receipt: TransactionReceipt, offer: Offer): boolean =>
    receipt.status === 'success' &&
    parseEventLogs({ abi: USDC_ABI, eventName: 'Transfer', logs: receipt.logs }).some(
      (log) =>
        log.address.toLowerCase() === offer.asset.toLowerCase() &&
        log.args.from.toLowerCase() === address.toLowerCase() &&
        log.args.to.toLowerCase() === offer.payTo.toLowerCase() &&
        log.args.value === offer.amount,
    );

  const publicFor = (client: WalletClient): PublicClient =>
    createPublicClient({ transport: http(rpcUrl ?? client.transport.url), pollingInterval: pollingIntervalMs });

  return {
    address,
    async paymentHeader(offer) {
      // As x402 clients do: valid from a little ago (clock skew) until the offer's timeout, but never
      // longer than our cap: a signed authorization is spendable by whoever holds it until validBefore.
      const validForSeconds = Math.min(offer.maxTimeoutSeconds, maxAuthorizationSeconds);
      const authorization = exactAuthorization({
        from: address,
        to: offer.payTo,
        value: offer.amount,
        validForSeconds,
      });
      const typedData = transferWithAuthorizationTypedData(
        { ...offer.domain, chainId: offer.chainId, verifyingContract: offer.asset },
        authorization,
      );
      const signature = await signTypedData(typedData);
      if (offer.version === 2 && offer.v2) {
        return [
          'PAYMENT-SIGNATURE',
          encodeBase64Json(
            exactPaymentV2(offer.v2.accepted, authorization, signature, { resource: offer.v2.resource }),
          ),
        ];
      }
      return ['X-PAYMENT', encodeBase64Json(exactPaymentV1(offer.network, authorization, signature))];
    },
    async transfer(offer, onSent) {
      const client = wallet();
      const call = {
        address: offer.asset,
        abi: USDC_ABI,
        functionName: 'transfer',
        args: [offer.payTo, offer.amount],
        account: signer,
        chain: null,
      } as const;
      // Estimated before anything is sent: a transfer the token would refuse (a pay_to it will not
      // pay) fails here, surely unsent, and costs the budget nothing.
      let gas: bigint;
      try {
        gas = await publicFor(client).estimateContractGas(call);
      } catch (error) {
        throw new TransferNotSent(error);
      }
      const hash = await inTurn(() => sendTransfer(client, { ...call, gas }, onSent));
      const receipt = await publicFor(client).waitForTransactionReceipt({ hash, pollingInterval: pollingIntervalMs });
      // viem answers a replacement's receipt as ours (another transaction at its nonce): the wallet's
      // re-priced copy of it pays the page; anything else leaves it in doubt, asked again.
      if (receipt.transactionHash !== hash) {
        // Only a wallet re-prices: a local key's transaction replaced is another's at its nonce (another
        // process on the key paying another page the same way), never this transfer (helper-448).
        if (signer.type !== 'local' && paysOffer(receipt, offer)) return receipt.transactionHash;
        throw new Error(`USDC transfer ${hash} was replaced by ${receipt.transactionHash}`);
      }
      if (receipt.status !== 'success') throw new TransferReverted(hash);
      return hash;
    },
    transferFate,
    signTypedData,
    chain() {
      const client = wallet();
      return { wallet: client, public: publicFor(client) };
    },
    signTransferProof: (gateRef, txHash) => signMessage(transferProofMessage(gateRef, txHash)),
    signMessage,
    inTurn,
  };
}
