// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title TestBundler
/// @notice Test only: several calls in one transaction, from anyone, all reverted if one fails.
/// Builds what a stranger can send: a bundle of other people's signed EIP-3009 authorizations,
/// read from the mempool or from calldata, settled together.
contract TestBundler {
    function callAll(address[] calldata targets, bytes[] calldata data) external {
        require(targets.length == data.length, "TestBundler: length mismatch");
        for (uint256 i = 0; i < targets.length; i++) {
            (bool ok, bytes memory result) = targets[i].call(data[i]);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(result, 0x20), mload(result))
                }
            }
        }
    }
}
