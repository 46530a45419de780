// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title TestWallet
/// @notice A minimal ERC-1271 smart-contract wallet for tests: a signature is valid when it is an
/// ECDSA signature of the digest by the wallet's signer key. Lets tests pay from a contract
/// account, the way smart wallets (Coinbase Smart Wallet, Safe) sign EIP-3009 authorizations.
contract TestWallet {
    bytes4 private constant MAGIC_VALUE = 0x1626ba7e; // isValidSignature.selector
    bytes4 private constant INVALID = 0xffffffff;

    address public immutable signer;

    constructor(address signer_) {
        signer = signer_;
    }

    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4) {
        if (signature.length != 65) return INVALID;
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        address recovered = ecrecover(hash, v, r, s);
        return recovered != address(0) && recovered == signer ? MAGIC_VALUE : INVALID;
    }

    /// Lets the signer move the wallet's own tokens (e.g. approve/transfer) in tests.
    function execute(address target, bytes calldata data) external returns (bytes memory) {
        require(msg.sender == signer, "TestWallet: caller is not the signer");
        (bool ok, bytes memory result) = target.call(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(result, 0x20), mload(result))
            }
        }
        return result;
    }
}
