// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// TEST ONLY: an ERC-20 with an EIP-3009-shaped `receiveWithAuthorization` that checks no signature,
/// built to attack the batch-settlement escrow. When armed it calls `target` with `data` from
/// inside its own `transfer` or `receiveWithAuthorization` (a reentrant call back into the escrow
/// while the escrow is mid-operation) and records how that call ended. `shortChange` makes every
/// transfer deliver one unit less than asked, like a fee-on-transfer token.
contract HostileToken {
    mapping(address => uint256) public balanceOf;

    address public target;
    bytes public reentryData;
    bool public onTransfer;
    bool public onReceive;
    bool public shortChange;

    uint256 public reentryAttempts;
    bool public lastReentrySucceeded;
    bytes public lastReentryResult;

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
    }

    function arm(address target_, bytes calldata data, bool onTransfer_, bool onReceive_) external {
        target = target_;
        reentryData = data;
        onTransfer = onTransfer_;
        onReceive = onReceive_;
    }

    function setShortChange(bool on) external {
        shortChange = on;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        if (onTransfer) _reenter();
        return true;
    }

    function receiveWithAuthorization(address from, address to, uint256 value, uint256, uint256, bytes32, bytes memory)
        external
    {
        require(msg.sender == to, "HostileToken: caller must be the payee");
        _move(from, to, value);
        if (onReceive) _reenter();
    }

    function _move(address from, address to, uint256 value) private {
        balanceOf[from] -= value;
        balanceOf[to] += shortChange ? value - 1 : value;
    }

    function _reenter() private {
        reentryAttempts += 1;
        (bool ok, bytes memory out) = target.call(reentryData);
        lastReentrySucceeded = ok;
        lastReentryResult = out;
    }
}
