// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title SimulationAwareWallet
/// @notice Test only: an ERC-1271 wallet that says yes to any signature in a simulation (an
/// eth_call or gas estimate, priced at 0) and no in a transaction that pays for gas. What a payer
/// needs to make a relayer broadcast settlements that pass every check and revert on chain, at the
/// relayer's cost and none of its own.
contract SimulationAwareWallet {
    bytes4 private constant MAGIC_VALUE = 0x1626ba7e; // isValidSignature.selector
    bytes4 private constant INVALID = 0xffffffff;

    function isValidSignature(bytes32, bytes memory) external view returns (bytes4) {
        return tx.gasprice == 0 ? MAGIC_VALUE : INVALID;
    }
}
