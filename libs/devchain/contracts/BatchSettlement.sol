// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// The two ERC-20 calls the escrow makes.
interface IEscrowToken {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
}

/// A pluggable deposit puller (x402 `IDepositCollector`): moves `amount` of `token` from `payer`
/// to the calling escrow, with whatever authorization `collectorData` carries.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external;
}

interface IERC1271Signer {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4);
}

/// Escrow for x402's `batch-settlement` EVM scheme (specs/schemes/batch-settlement/
/// scheme_batch_settlement_evm.md), written for Crawlgate from that specification and the ABI that
/// x402's unmodified EVM client and facilitator (npm package x402/evm) call, so they work unchanged.
///
/// A payer deposits into a channel named by the EIP-712 hash of its immutable `ChannelConfig`; it
/// pays each request with an off-chain cumulative `Voucher`; the receiver side claims the latest
/// voucher of many channels in one transaction and `settle` sweeps what was claimed to the receiver.
/// The payer leaves with a cooperative refund (receiver side) or a timed withdrawal whose delay is
/// the receiver's window to claim what it is owed.
///
/// Invariants: per channel `totalClaimed <= balance`; `totalClaimed` only grows; a claim row moves
/// value only up to its payer-signed ceiling; every token movement happens after the state change it
/// pays for (checks-effects-interactions) under a transient-storage reentrancy lock.
contract BatchSettlement {
    // ---------------------------------------------------------------- types (ABI-visible)

    struct ChannelConfig {
        address payer;
        address payerAuthorizer; // EOA signing vouchers; zero: the payer signs (ECDSA or ERC-1271)
        address receiver;
        address receiverAuthorizer; // signs claim batches and refunds; never zero
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct ChannelState {
        uint128 balance; // deposited minus withdrawn minus refunded
        uint128 totalClaimed; // cumulative, never decreases
    }

    struct WithdrawalState {
        uint128 amount;
        uint40 initiatedAt; // zero: none pending
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// `totalClaimed` is the cumulative amount the receiver side wants recorded (not a delta).
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    // ---------------------------------------------------------------- constants

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant VERSION_HASH = keccak256("1");

    /// secp256k1n / 2: signatures with a larger `s` are the malleable twin of a valid one.
    uint256 private constant HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;

    // ---------------------------------------------------------------- storage
    // No constructor and no immutables: the runtime code alone is the contract, so a local chain can
    // place it at x402's canonical address with `anvil_setCode` and nothing else.

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(bytes32 channelId => WithdrawalState) public pendingWithdrawals;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    bool private transient _locked;

    // ---------------------------------------------------------------- events (as x402 defines them)

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);

    // ---------------------------------------------------------------- errors

    error Reentrancy();
    error InvalidChannel();
    error WithdrawDelayOutOfRange();
    error ZeroDeposit();
    error InvalidCollector();
    error DepositCollectionFailed();
    error EmptyBatch();
    error NotAuthorizedToClaim();
    error NotReceiverAuthorizer();
    error InvalidSignature();
    error ClaimExceedsCeiling();
    error ClaimExceedsBalance();
    error NotAuthorizedToWithdraw();
    error NothingToWithdraw();
    error WithdrawalAlreadyPending();
    error WithdrawalNotPending();
    error WithdrawAmountExceedsAvailable();
    error WithdrawDelayNotElapsed();
    error NotAuthorizedToRefund();
    error ZeroRefund();
    error InvalidRefundNonce();
    error TokenTransferFailed();

    modifier nonReentrant() {
        if (_locked) revert Reentrancy();
        _locked = true;
        _;
        _locked = false;
    }

    // ---------------------------------------------------------------- deposit

    /// Credits `amount` to the channel, pulled from `config.payer` by `collector`. The credit is
    /// recorded first; the call then fails unless this contract's token balance grew by exactly
    /// `amount` (a collector or token that under-delivers cannot mint escrow).
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0) || collector.code.length == 0) revert InvalidCollector();

        bytes32 channelId = getChannelId(config);
        ChannelState storage ch = channels[channelId];
        bool opening = ch.balance == 0; // totalClaimed <= balance, so an empty channel has no claims
        ch.balance += amount; // checked: reverts on overflow

        uint256 before = IEscrowToken(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (IEscrowToken(config.token).balanceOf(address(this)) != before + amount) revert DepositCollectionFailed();

        if (opening) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, ch.balance);
    }

    // ---------------------------------------------------------------- claim and settle

    /// Claims rows whose channels all name `msg.sender` as receiver or receiver authorizer.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyBatch();
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            ChannelConfig calldata c = voucherClaims[i].voucher.channel;
            if (msg.sender != c.receiver && msg.sender != c.receiverAuthorizer) revert NotAuthorizedToClaim();
            _applyClaim(voucherClaims[i]);
        }
    }

    /// Claims rows authorized by one EIP-712 `ClaimBatch` signature of their common receiver
    /// authorizer; anyone may relay it.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; ++i) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert NotReceiverAuthorizer();
        }
        if (!_isValidSignature(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            _applyClaim(voucherClaims[i]);
        }
    }

    /// Moves everything claimed and not yet settled for (receiver, token) to the receiver. Anyone
    /// may call it; the money only ever goes to `receiver`.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        if (amount == 0) return;
        r.totalSettled = r.totalClaimed;
        emit Settled(receiver, token, msg.sender, amount);
        _transfer(token, receiver, amount);
    }

    // ---------------------------------------------------------------- timed withdrawal

    /// Starts the payer's escape hatch for up to the unclaimed escrow. Until `withdrawDelay` has
    /// passed the receiver can still claim vouchers, and finalization pays only what is then unclaimed.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _requirePayerSide(config);
        if (amount == 0) revert NothingToWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage w = pendingWithdrawals[channelId];
        if (w.initiatedAt != 0) revert WithdrawalAlreadyPending();
        ChannelState storage ch = channels[channelId];
        if (amount > ch.balance - ch.totalClaimed) revert WithdrawAmountExceedsAvailable();

        w.amount = amount;
        w.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp) + config.withdrawDelay);
    }

    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _requirePayerSide(config);
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage w = pendingWithdrawals[channelId];
        if (w.initiatedAt == 0) revert WithdrawalNotPending();
        if (block.timestamp < uint256(w.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();

        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 amount = w.amount < available ? w.amount : available;
        delete pendingWithdrawals[channelId];
        ch.balance -= amount;

        emit WithdrawFinalized(channelId, msg.sender, amount);
        if (ch.balance == 0) emit ChannelClosed(channelId, config);
        if (amount > 0) _transfer(config.token, config.payer, amount);
    }

    // ---------------------------------------------------------------- cooperative refund

    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotAuthorizedToRefund();
        _refund(config, getChannelId(config), amount);
    }

    /// Relayable refund: `nonce` must be the channel's current `refundNonce`, signed by the receiver
    /// authorizer as EIP-712 `Refund(channelId, nonce, amount)`.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        if (!_isValidSignature(config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature)) {
            revert InvalidSignature();
        }
        _refund(config, channelId, amount);
    }

    // ---------------------------------------------------------------- batching

    /// Runs several calls of this contract in one transaction (x402's facilitator sends claim +
    /// refund this way). Each call takes the reentrancy lock itself; nothing here is payable.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; ++i) {
            (bool ok, bytes memory out) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(out, 0x20), mload(out))
                }
            }
            results[i] = out;
        }
    }

    // ---------------------------------------------------------------- views

    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _typedDataHash(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _typedDataHash(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _typedDataHash(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// EIP-712 hash of `ClaimBatch(ClaimEntry[] claims)`: an array member is the keccak of its
    /// elements' struct hashes laid end to end.
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(voucherClaims[i].voucher.channel),
                    voucherClaims[i].voucher.maxClaimableAmount,
                    voucherClaims[i].totalClaimed
                )
            );
        }
        return _typedDataHash(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        // Computed per call from the live chain id and address: correct after a fork and wherever
        // the code is placed (no cached immutable to go stale).
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// EIP-5267: lets wallets and tools discover the domain.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", "x402 Batch Settlement", "1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---------------------------------------------------------------- internals

    /// Records one claim row. A row at or below what is already recorded changes nothing (a
    /// replayed or stale voucher cannot count twice, and one stale row does not sink the batch);
    /// above it, the row must stay within its signed ceiling and the channel's balance and carry
    /// the payer's signature.
    function _applyClaim(VoucherClaim calldata vc) private {
        ChannelConfig calldata c = vc.voucher.channel;
        bytes32 channelId = getChannelId(c);
        ChannelState storage ch = channels[channelId];
        uint128 target = vc.totalClaimed;
        if (target <= ch.totalClaimed) return;
        if (target > vc.voucher.maxClaimableAmount) revert ClaimExceedsCeiling();
        if (target > ch.balance) revert ClaimExceedsBalance();

        bytes32 digest = getVoucherDigest(channelId, vc.voucher.maxClaimableAmount);
        bool signed = c.payerAuthorizer != address(0)
            ? _recover(digest, vc.signature) == c.payerAuthorizer // committed EOA: ECDSA only
            : _isValidSignature(c.payer, digest, vc.signature);
        if (!signed) revert InvalidSignature();

        uint128 delta = target - ch.totalClaimed;
        ch.totalClaimed = target;
        receivers[c.receiver][c.token].totalClaimed += delta;
        emit Claimed(channelId, msg.sender, delta, target);
    }

    /// Advances the refund nonce even when nothing is left to refund (x402 semantics: any executed
    /// refund invalidates signatures for the old nonce), then returns up to the unclaimed escrow and
    /// shrinks or cancels a pending withdrawal by what was returned.
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        if (amount == 0) revert ZeroRefund();
        refundNonce[channelId] += 1;

        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 refunded = amount < available ? amount : available;
        if (refunded == 0) return;
        ch.balance -= refunded;

        WithdrawalState storage w = pendingWithdrawals[channelId];
        if (w.initiatedAt != 0) {
            if (refunded >= w.amount) delete pendingWithdrawals[channelId];
            else w.amount -= refunded;
        }

        emit Refunded(channelId, msg.sender, refunded);
        if (ch.balance == 0) emit ChannelClosed(channelId, config);
        _transfer(config.token, config.payer, refunded);
    }

    function _requirePayerSide(ChannelConfig calldata config) private view {
        if (msg.sender != config.payer && (config.payerAuthorizer == address(0) || msg.sender != config.payerAuthorizer))
        {
            revert NotAuthorizedToWithdraw();
        }
    }

    function _typedDataHash(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    /// An EOA's strict ECDSA signature, else (for a contract signer) ERC-1271.
    function _isValidSignature(address signer, bytes32 digest, bytes calldata signature) private view returns (bool) {
        if (signer == address(0)) return false;
        if (_recover(digest, signature) == signer) return true;
        if (signer.code.length == 0) return false;
        (bool ok, bytes memory out) =
            signer.staticcall(abi.encodeCall(IERC1271Signer.isValidSignature, (digest, signature)));
        return ok && out.length >= 32 && abi.decode(out, (bytes4)) == ERC1271_MAGIC;
    }

    /// 65-byte (r, s, v) ECDSA with low `s` and v in {27, 28}; anything else, or a failed recovery,
    /// yields address(0), which never equals a valid signer.
    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    /// ERC-20 transfer that accepts tokens returning nothing and fails on `false`, a revert or a
    /// token address without code.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory out) = token.call(abi.encodeCall(IEscrowToken.transfer, (to, amount)));
        if (!ok || (out.length == 0 ? token.code.length == 0 : !abi.decode(out, (bool)))) revert TokenTransferFailed();
    }
}
