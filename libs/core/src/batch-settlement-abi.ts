/**
 * The slice of the batch-settlement escrow's ABI (x402BatchSettlement, and our own
 * libs/devchain/contracts/BatchSettlement.sol) that the API and the agent call: channel state,
 * deposits through a collector, claims under a receiver-authorizer signature, settlement, the
 * payer's timed withdrawal, cooperative refunds (relayed, batched with claims by multicall; or the
 * receiver authorizer's own, which the API only simulates), and the
 * errors it reverts with.
 */
/** The escrow's ChannelConfig struct as a parameter named `name`. */
const channelConfigParam = <const Name extends string>(name: Name) =>
  ({
    name,
    type: 'tuple',
    components: [
      { name: 'payer', type: 'address' },
      { name: 'payerAuthorizer', type: 'address' },
      { name: 'receiver', type: 'address' },
      { name: 'receiverAuthorizer', type: 'address' },
      { name: 'token', type: 'address' },
      { name: 'withdrawDelay', type: 'uint40' },
      { name: 'salt', type: 'bytes32' },
    ],
  }) as const;
const CONFIG_PARAM = channelConfigParam('config');
const CHANNEL_PARAM = channelConfigParam('channel');

export const BATCH_SETTLEMENT_ABI = [
  {
    type: 'function',
    name: 'channels',
    stateMutability: 'view',
    inputs: [
      {
        name: 'channelId',
        type: 'bytes32',
      },
    ],
    outputs: [
      {
        name: 'balance',
        type: 'uint128',
      },
      {
        name: 'totalClaimed',
        type: 'uint128',
      },
    ],
  },
  {
    type: 'function',
    name: 'claimWithSignature',
    stateMutability: 'nonpayable',
    inputs: [
      {
        name: 'voucherClaims',
        type: 'tuple[]',
        components: [
          {
            name: 'voucher',
            type: 'tuple',
            components: [
              CHANNEL_PARAM,
              {
                name: 'maxClaimableAmount',
                type: 'uint128',
              },
            ],
          },
          {
            name: 'signature',
            type: 'bytes',
          },
          {
            name: 'totalClaimed',
            type: 'uint128',
          },
        ],
      },
      {
        name: 'authorizerSignature',
        type: 'bytes',
      },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'deposit',
    stateMutability: 'nonpayable',
    inputs: [
      CONFIG_PARAM,
      {
        name: 'amount',
        type: 'uint128',
      },
      {
        name: 'collector',
        type: 'address',
      },
      {
        name: 'collectorData',
        type: 'bytes',
      },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'initiateWithdraw',
    stateMutability: 'nonpayable',
    inputs: [
      CONFIG_PARAM,
      {
        name: 'amount',
        type: 'uint128',
      },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'finalizeWithdraw',
    stateMutability: 'nonpayable',
    inputs: [CONFIG_PARAM],
    outputs: [],
  },
  {
    type: 'function',
    name: 'pendingWithdrawals',
    stateMutability: 'view',
    inputs: [
      {
        name: 'channelId',
        type: 'bytes32',
      },
    ],
    outputs: [
      {
        name: 'amount',
        type: 'uint128',
      },
      {
        name: 'initiatedAt',
        type: 'uint40',
      },
    ],
  },
  {
    type: 'function',
    name: 'receivers',
    stateMutability: 'view',
    inputs: [
      {
        name: 'receiver',
        type: 'address',
      },
      {
        name: 'token',
        type: 'address',
      },
    ],
    outputs: [
      {
        name: 'totalClaimed',
        type: 'uint128',
      },
      {
        name: 'totalSettled',
        type: 'uint128',
      },
    ],
  },
  {
    type: 'function',
    name: 'refundNonce',
    stateMutability: 'view',
    inputs: [
      {
        name: 'channelId',
        type: 'bytes32',
      },
    ],
    outputs: [
      {
        name: '',
        type: 'uint256',
      },
    ],
  },
  {
    type: 'function',
    name: 'settle',
    stateMutability: 'nonpayable',
    inputs: [
      {
        name: 'receiver',
        type: 'address',
      },
      {
        name: 'token',
        type: 'address',
      },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'refund',
    stateMutability: 'nonpayable',
    inputs: [CONFIG_PARAM, { name: 'amount', type: 'uint128' }],
    outputs: [],
  },
  {
    type: 'function',
    name: 'refundWithSignature',
    stateMutability: 'nonpayable',
    inputs: [
      CONFIG_PARAM,
      { name: 'amount', type: 'uint128' },
      { name: 'nonce', type: 'uint256' },
      { name: 'receiverAuthorizerSignature', type: 'bytes' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'multicall',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'data', type: 'bytes[]' }],
    outputs: [{ name: 'results', type: 'bytes[]' }],
  },
  {
    type: 'event',
    name: 'Deposited',
    anonymous: false,
    inputs: [
      { name: 'channelId', type: 'bytes32', indexed: true },
      { name: 'sender', type: 'address', indexed: true },
      { name: 'amount', type: 'uint128', indexed: false },
      { name: 'newBalance', type: 'uint128', indexed: false },
    ],
  },
  {
    type: 'event',
    name: 'WithdrawInitiated',
    anonymous: false,
    inputs: [
      { name: 'channelId', type: 'bytes32', indexed: true },
      { name: 'amount', type: 'uint128', indexed: false },
      { name: 'finalizeAfter', type: 'uint40', indexed: false },
    ],
  },
  {
    type: 'event',
    name: 'Refunded',
    anonymous: false,
    inputs: [
      { name: 'channelId', type: 'bytes32', indexed: true },
      { name: 'sender', type: 'address', indexed: true },
      { name: 'amount', type: 'uint128', indexed: false },
    ],
  },
  {
    type: 'error',
    name: 'ClaimExceedsBalance',
    inputs: [],
  },
  {
    type: 'error',
    name: 'ClaimExceedsCeiling',
    inputs: [],
  },
  {
    type: 'error',
    name: 'DepositCollectionFailed',
    inputs: [],
  },
  {
    type: 'error',
    name: 'EmptyBatch',
    inputs: [],
  },
  {
    type: 'error',
    name: 'InvalidChannel',
    inputs: [],
  },
  {
    type: 'error',
    name: 'InvalidCollector',
    inputs: [],
  },
  {
    type: 'error',
    name: 'InvalidRefundNonce',
    inputs: [],
  },
  {
    type: 'error',
    name: 'InvalidSignature',
    inputs: [],
  },
  {
    type: 'error',
    name: 'NotAuthorizedToClaim',
    inputs: [],
  },
  {
    type: 'error',
    name: 'NotAuthorizedToRefund',
    inputs: [],
  },
  {
    type: 'error',
    name: 'NotAuthorizedToWithdraw',
    inputs: [],
  },
  {
    type: 'error',
    name: 'NotReceiverAuthorizer',
    inputs: [],
  },
  {
    type: 'error',
    name: 'NothingToWithdraw',
    inputs: [],
  },
  {
    type: 'error',
    name: 'Reentrancy',
    inputs: [],
  },
  {
    type: 'error',
    name: 'TokenTransferFailed',
    inputs: [],
  },
  {
    type: 'error',
    name: 'WithdrawAmountExceedsAvailable',
    inputs: [],
  },
  {
    type: 'error',
    name: 'WithdrawDelayNotElapsed',
    inputs: [],
  },
  {
    type: 'error',
    name: 'WithdrawDelayOutOfRange',
    inputs: [],
  },
  {
    type: 'error',
    name: 'WithdrawalAlreadyPending',
    inputs: [],
  },
  {
    type: 'error',
    name: 'WithdrawalNotPending',
    inputs: [],
  },
  {
    type: 'error',
    name: 'ZeroDeposit',
    inputs: [],
  },
  {
    type: 'error',
    name: 'ZeroRefund',
    inputs: [],
  },
] as const;
