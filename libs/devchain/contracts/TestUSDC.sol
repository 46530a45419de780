// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Minimal ERC-1271 surface: smart-contract wallets answer whether a signature is theirs.
interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4);
}

/// @title TestUSDC
/// @notice A local stand-in for Circle's USDC (FiatTokenV2_2) for Crawlgate's dev chain and tests.
/// It reproduces the parts a payment gate touches — ERC-20 with 6 decimals, EIP-2612 permit,
/// EIP-3009 transfer/receive/cancel with authorization in both signature forms, ERC-1271 signers —
/// with the same function signatures and revert strings as USDC, so a revert seen locally reads
/// the same as on Base. Blacklisting is kept as USDC has it (no transfer from or to a blacklisted
/// account, by any path, the token's own address blacklisted from the start; the owner is the
/// blacklister), as anyone can name a blacklisted address as a payout address. It leaves out what a gate never touches: proxy, pausing, rescue, master-minter
/// and allowance-per-minter bookkeeping beyond a simple cap.
contract TestUSDC {
    // ---------------------------------------------------------------- ERC-20 metadata

    string public name;
    string public constant symbol = "USDC";
    uint8 public constant decimals = 6;
    string public constant currency = "USD";
    /// EIP-712 domain version (USDC: "2").
    string public version;

    // ---------------------------------------------------------------- ERC-20 state

    uint256 public totalSupply;
    /// As USDC v2.2 keeps them: an account's balance, and its blacklisting in the top bit of the same
    /// word, so a transfer's blacklist checks read no storage slot more than its balance does.
    mapping(address => uint256) private _balanceAndBlacklistStates;
    mapping(address => mapping(address => uint256)) public allowance;

    // ---------------------------------------------------------------- roles

    address public owner;
    address public blacklister;
    mapping(address => bool) public isMinter;
    mapping(address => uint256) public minterAllowance;

    // ---------------------------------------------------------------- EIP-2612 / EIP-3009 state

    mapping(address => uint256) public nonces;
    /// authorizer => nonce => used or canceled
    mapping(address => mapping(bytes32 => bool)) public authorizationState;

    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    // Upper bound for a canonical (low) s value: secp256k1n / 2.
    uint256 private constant MAX_LOW_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    bytes32 private immutable _hashedName;
    bytes32 private immutable _hashedVersion;

    // ---------------------------------------------------------------- events

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);
    event Mint(address indexed minter, address indexed to, uint256 amount);
    event Burn(address indexed burner, uint256 amount);
    event MinterConfigured(address indexed minter, uint256 minterAllowedAmount);
    event MinterRemoved(address indexed oldMinter);
    event OwnershipTransferred(address previousOwner, address newOwner);
    event Blacklisted(address indexed _account);
    event UnBlacklisted(address indexed _account);
    event BlacklisterChanged(address indexed newBlacklister);

    /// @param name_    token name, also the EIP-712 domain name ("USD Coin" on Base, "USDC" on Base Sepolia)
    /// @param version_ EIP-712 domain version ("2" for USDC)
    constructor(string memory name_, string memory version_) {
        name = name_;
        version = version_;
        _hashedName = keccak256(bytes(name_));
        _hashedVersion = keccak256(bytes(version_));
        owner = msg.sender;
        blacklister = msg.sender;
        // As USDC (initializeV2_1): no transfer to the token's own address.
        _balanceAndBlacklistStates[address(this)] = BLACKLISTED;
        emit OwnershipTransferred(address(0), msg.sender);
        emit Blacklisted(address(this));
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "Ownable: caller is not the owner");
        _;
    }

    modifier onlyBlacklister() {
        require(msg.sender == blacklister, "Blacklistable: caller is not the blacklister");
        _;
    }

    modifier notBlacklisted(address account) {
        require(!_isBlacklisted(account), "Blacklistable: account is blacklisted");
        _;
    }

    modifier onlyMinters() {
        require(msg.sender == owner || isMinter[msg.sender], "FiatToken: caller is not a minter");
        _;
    }

    // ---------------------------------------------------------------- EIP-712

    /// Computed per call (as USDC v2.2 does) so the domain stays right if the chain id changes.
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparator();
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(EIP712_DOMAIN_TYPEHASH, _hashedName, _hashedVersion, block.chainid, address(this)));
    }

    function _typedDataHash(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", _domainSeparator(), structHash));
    }

    // ---------------------------------------------------------------- ERC-20

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value)
        external
        notBlacklisted(msg.sender)
        returns (bool)
    {
        uint256 allowed = allowance[from][msg.sender];
        require(value <= allowed, "ERC20: transfer amount exceeds allowance");
        _transfer(from, to, value);
        allowance[from][msg.sender] = allowed - value;
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        _approve(msg.sender, spender, value);
        return true;
    }

    function increaseAllowance(address spender, uint256 increment) external returns (bool) {
        _approve(msg.sender, spender, allowance[msg.sender][spender] + increment);
        return true;
    }

    function decreaseAllowance(address spender, uint256 decrement) external returns (bool) {
        uint256 current = allowance[msg.sender][spender];
        require(decrement <= current, "ERC20: decreased allowance below zero");
        _approve(msg.sender, spender, current - decrement);
        return true;
    }

    /// Every transfer (ERC-20, EIP-3009) comes here, so none moves from or to a blacklisted account.
    function _transfer(address from, address to, uint256 value)
        private
        notBlacklisted(from)
        notBlacklisted(to)
    {
        require(from != address(0), "ERC20: transfer from the zero address");
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 fromBalance = balanceOf(from);
        require(value <= fromBalance, "ERC20: transfer amount exceeds balance");
        unchecked {
            _balanceAndBlacklistStates[from] = fromBalance - value; // not blacklisted: its top bit is 0
        }
        _balanceAndBlacklistStates[to] += value; // below 2^255 with any supply a minter can make
        emit Transfer(from, to, value);
    }

    // ---------------------------------------------------------------- blacklisting

    uint256 private constant BLACKLISTED = 1 << 255;

    function balanceOf(address account) public view returns (uint256) {
        return _balanceAndBlacklistStates[account] & ~BLACKLISTED;
    }

    function _isBlacklisted(address account) private view returns (bool) {
        return _balanceAndBlacklistStates[account] & BLACKLISTED != 0;
    }

    function isBlacklisted(address account) external view returns (bool) {
        return _isBlacklisted(account);
    }

    function blacklist(address account) external onlyBlacklister {
        _balanceAndBlacklistStates[account] |= BLACKLISTED;
        emit Blacklisted(account);
    }

    function unBlacklist(address account) external onlyBlacklister {
        _balanceAndBlacklistStates[account] &= ~BLACKLISTED;
        emit UnBlacklisted(account);
    }

    function updateBlacklister(address newBlacklister) external onlyOwner {
        require(newBlacklister != address(0), "Blacklistable: new blacklister is the zero address");
        blacklister = newBlacklister;
        emit BlacklisterChanged(newBlacklister);
    }

    function _approve(address holder, address spender, uint256 value) private {
        require(holder != address(0), "ERC20: approve from the zero address");
        require(spender != address(0), "ERC20: approve to the zero address");
        allowance[holder][spender] = value;
        emit Approval(holder, spender, value);
    }

    // ---------------------------------------------------------------- minting

    /// The owner mints without limit (dev convenience); other minters spend their allowance.
    function mint(address to, uint256 amount) external onlyMinters notBlacklisted(to) returns (bool) {
        require(to != address(0), "FiatToken: mint to the zero address");
        require(amount > 0, "FiatToken: mint amount not greater than 0");
        if (msg.sender != owner) {
            uint256 allowed = minterAllowance[msg.sender];
            require(amount <= allowed, "FiatToken: mint amount exceeds minterAllowance");
            minterAllowance[msg.sender] = allowed - amount;
        }
        totalSupply += amount;
        _balanceAndBlacklistStates[to] += amount;
        emit Mint(msg.sender, to, amount);
        emit Transfer(address(0), to, amount);
        return true;
    }

    function burn(uint256 amount) external onlyMinters {
        uint256 balance = balanceOf(msg.sender);
        require(amount > 0, "FiatToken: burn amount not greater than 0");
        require(balance >= amount, "FiatToken: burn amount exceeds balance");
        unchecked {
            _balanceAndBlacklistStates[msg.sender] -= amount;
            totalSupply -= amount;
        }
        emit Burn(msg.sender, amount);
        emit Transfer(msg.sender, address(0), amount);
    }

    function configureMinter(address minter, uint256 minterAllowedAmount) external onlyOwner returns (bool) {
        isMinter[minter] = true;
        minterAllowance[minter] = minterAllowedAmount;
        emit MinterConfigured(minter, minterAllowedAmount);
        return true;
    }

    function removeMinter(address minter) external onlyOwner returns (bool) {
        isMinter[minter] = false;
        minterAllowance[minter] = 0;
        emit MinterRemoved(minter);
        return true;
    }

    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "Ownable: new owner is the zero address");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    // ---------------------------------------------------------------- EIP-2612

    function permit(address holder, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        _permit(holder, spender, value, deadline, abi.encodePacked(r, s, v));
    }

    function permit(address holder, address spender, uint256 value, uint256 deadline, bytes memory signature)
        external
    {
        _permit(holder, spender, value, deadline, signature);
    }

    function _permit(address holder, address spender, uint256 value, uint256 deadline, bytes memory signature)
        private
    {
        require(deadline == type(uint256).max || deadline >= block.timestamp, "FiatTokenV2: permit is expired");
        bytes32 digest =
            _typedDataHash(keccak256(abi.encode(PERMIT_TYPEHASH, holder, spender, value, nonces[holder]++, deadline)));
        require(_isValidSignatureNow(holder, digest, signature), "EIP2612: invalid signature");
        _approve(holder, spender, value);
    }

    // ---------------------------------------------------------------- EIP-3009

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v)
        );
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    /// Like transferWithAuthorization, but only the payee may submit it (stops front-running
    /// a deposit into a contract).
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v)
        );
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, abi.encodePacked(r, s, v));
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        _cancelAuthorization(authorizer, nonce, signature);
    }

    /// Checks run in USDC's order: time window, nonce, signature, then balance (in _transfer).
    function _transferWithAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        _requireUnusedAuthorization(from, nonce);
        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        require(_isValidSignatureNow(from, _typedDataHash(structHash), signature), "FiatTokenV2: invalid signature");

        authorizationState[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) private {
        _requireUnusedAuthorization(authorizer, nonce);
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        require(
            _isValidSignatureNow(authorizer, _typedDataHash(structHash), signature), "FiatTokenV2: invalid signature"
        );

        authorizationState[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) private view {
        require(!authorizationState[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
    }

    // ---------------------------------------------------------------- signatures

    /// EOAs (no code): ECDSA recovery. Contracts: ERC-1271 isValidSignature, as USDC v2.2 does.
    function _isValidSignatureNow(address signer, bytes32 digest, bytes memory signature)
        private
        view
        returns (bool)
    {
        if (signer.code.length == 0) {
            return _recover(digest, signature) == signer;
        }
        (bool ok, bytes memory result) =
            signer.staticcall(abi.encodeCall(IERC1271.isValidSignature, (digest, signature)));
        return ok && result.length >= 32 && abi.decode(result, (bytes32)) == bytes32(IERC1271.isValidSignature.selector);
    }

    /// Strict ECDSA recovery: 65 bytes (r, s, v), low s, v in {27, 28}, non-zero signer.
    /// Malformed signatures revert with USDC's ECRecover messages rather than returning false.
    function _recover(bytes32 digest, bytes memory signature) private pure returns (address) {
        require(signature.length == 65, "ECRecover: invalid signature length");
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        require(uint256(s) <= MAX_LOW_S, "ECRecover: invalid signature 's' value");
        require(v == 27 || v == 28, "ECRecover: invalid signature 'v' value");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "ECRecover: invalid signature");
        return signer;
    }
}
