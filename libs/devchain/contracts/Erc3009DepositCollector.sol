// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

interface IErc3009Token {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
    function transfer(address to, uint256 value) external returns (bool);
}

/// Pulls a batch-settlement deposit with the payer's EIP-3009 `ReceiveWithAuthorization` and
/// forwards it to the escrow. EIP-3009's receive form demands `msg.sender == to`, so the payer
/// signs this contract as `to` (x402 clients sign x402's collector address) and the tokens pass
/// through here. The authorization's nonce is `keccak256(abi.encode(channelId, salt))`, which binds
/// the payer's signature to one channel: nobody can redirect it into another channel.
///
/// Only the escrow may call `collect`: the collector sends whatever it pulls to the escrow, and a
/// third party replaying a payer's published authorization here would strand the funds outside
/// any channel.
contract Erc3009DepositCollector {
    address public immutable escrow;

    error NotEscrow();
    error ZeroEscrow();
    error TokenTransferFailed();

    constructor(address escrow_) {
        if (escrow_ == address(0)) revert ZeroEscrow();
        escrow = escrow_;
    }

    /// @param collectorData `abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature)`
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != escrow) revert NotEscrow();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IErc3009Token(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        (bool ok, bytes memory out) = token.call(abi.encodeCall(IErc3009Token.transfer, (escrow, amount)));
        if (!ok || (out.length > 0 && !abi.decode(out, (bool)))) revert TokenTransferFailed();
    }
}
