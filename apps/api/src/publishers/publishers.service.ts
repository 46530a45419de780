import { Inject, Injectable } from '@nestjs/common';
import {
  decodeHeaderText,
  generateApiKey,
  payoutProofMessage,
  sha256Hex,
  type IssuedApiKey,
  type Publisher as PublisherBody,
  type RegisteredPublisher,
} from '@crawlgate/core';
import { getAddress, type Address, type Hex } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { ownAddressRole } from '../chain/own-addresses';
import { signedMessageBy } from '../chain/signed-message';
import { CHAIN } from '../chain/tokens';
import {
  decoyPasswordHash,
  hashPassword,
  PasswordChecksBusy,
  passwordChecksFull,
  verifyPassword,
} from '../crypto/password';
import type { Database } from '../db/database';
import { isUniqueViolation } from '../db/prisma-errors';
import { CONFIG, DATABASE } from '../db/tokens';
import type { AppConfig } from '../config/config';
import { ApiError, badRequest, conflict, unauthorized, unavailable } from '../http/api-error';
import { LOGINS_PER_ACCOUNT, LOGINS_PER_ACCOUNT_AND_NETWORK, PASSWORD_CONFIRMATIONS } from '../rate-limit/limits';
import type { Prisma, Publisher } from '../generated/prisma/client';
import { KnownNetworksStore } from './known-networks.store';
import { PasswordAttemptsStore, type AttemptBudget, type AttemptCount } from './password-attempts.store';
import { PayoutAddressStore } from './payout-address.store';
import type { ChangePasswordDto, LoginDto, RegisterPublisherDto, UpdatePublisherDto } from './publishers.dto';

@Injectable()
export class PublishersService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly attempts: PasswordAttemptsStore,
    private readonly payoutAddresses: PayoutAddressStore,
    private readonly knownNetworks: KnownNetworksStore,
  ) {}

  /** `network` is the client's (clientNetwork): known to the account's logins from then on. */
  async register(input: RegisterPublisherDto, network: string): Promise<RegisteredPublisher> {
    const apiKey = generateApiKey();
    const passwordHash = await passwordWork(hashPassword(input.password, this.config.passwordScryptLogN));
    try {
      // One transaction: an account is never left without the key shown for it.
      const publisher = await this.db.prisma.$transaction(async (tx) => {
        const created = await tx.publisher.create({
          data: { email: input.email, name: input.name ?? null, passwordHash, apiKeyHash: sha256Hex(apiKey) },
        });
        await this.knownNetworks.remember(tx, loginAccount(created.email), network, {
          publisherId: created.id,
          passwordHash,
        });
        return created;
      });
      return { ...publisherView(publisher), api_key: apiKey };
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('A publisher with this email is already registered');
      throw error;
    }
  }

  /**
   * Checks the password and issues a fresh key; the previous key stops working. `network` is the
   * client's (clientNetwork): logins are counted per account from it, then from all, but from a
   * network the account logged in from (KnownNetworksStore) for that network only.
   */
  async login(input: LoginDto, network: string): Promise<IssuedApiKey> {
    // Before the lookup, and the same for every email, so a 429 tells nothing about who is registered.
    // Counted before the password is checked, so that attempts sent at once cannot outrun the count;
    // the account's budget is spent only by attempts its network's budget let through.
    // Refused before any attempt is counted: a 503 for the server's load must not spend the owner's logins.
    if (passwordChecksFull()) throw passwordChecksBusy();
    const account = loginAccount(input.email);
    const fromNetwork = `${account}-${sha256Hex(network)}`;
    const known = await this.knownNetworks.isKnown(account, network);
    const blocked = await this.attempts.check(account);
    if (blocked.blocked) {
      // Blocked: only the right password from a known network goes on, within 10 tries a quarter of
      // an hour there, counted apart from the network's own count (which an unknown network, refused
      // before any count, leaves untouched too: after the block nothing tells a registered email from
      // another). The password is checked on every try, so neither an answer nor its time tells
      // which email is registered nor where its owner logs in from.
      const { publisher, passwordOk } = await this.checkPassword(input);
      if (known) {
        const tries = await this.attempts.spend(`${fromNetwork}-while-blocked`, LOGINS_PER_ACCOUNT_AND_NETWORK);
        if (!tries.blocked && publisher && passwordOk) return this.loggedIn(publisher, account, network);
      }
      throw tooMany(blocked, LOGINS_PER_ACCOUNT, 'logins for this account');
    }
    const networkCount = await this.attempts.spend(fromNetwork, LOGINS_PER_ACCOUNT_AND_NETWORK);
    this.refuseIfBlocked(networkCount, LOGINS_PER_ACCOUNT_AND_NETWORK, 'logins for this account from your network');
    if (!known) await this.spendAttempt(account, LOGINS_PER_ACCOUNT, 'logins for this account');
    const { publisher, passwordOk } = await this.checkPassword(input);
    if (!publisher || !passwordOk) {
      // From a known network a wrong password counts against the account as from any other, and is
      // answered so.
      if (known) await this.spendAttempt(account, LOGINS_PER_ACCOUNT, 'logins for this account');
      throw unauthorized('Invalid email or password');
    }
    return this.loggedIn(publisher, account, network);
  }

  /** A fresh key for a login whose password was just checked, and its network known from now. */
  private async loggedIn(publisher: Publisher, account: string, network: string): Promise<IssuedApiKey> {
    // The password wins over any key: written whatever key is current, but only while that password
    // still stands (a password change racing this login must not leave the old password's key working).
    // One transaction: a failed write leaves the current key working, not rotated away for none.
    const issued = await this.db.prisma.$transaction(async (tx) => {
      const key = await issueApiKey(tx, publisher.id, { passwordHash: publisher.passwordHash });
      if (key)
        await this.knownNetworks.remember(tx, account, network, {
          publisherId: publisher.id,
          passwordHash: publisher.passwordHash,
        });
      return key;
    });
    if (!issued) throw unauthorized('Invalid email or password');
    // Whoever logs in holds the password: the checks a stolen key spent guessing it (its holder now
    // logged out) no longer keep the owner from changing it, or the payout address.
    // Not the login's failure: its new key is already the account's, and must be answered.
    await this.attempts.forget(confirmationsKey(publisher.id)).catch(() => undefined);
    return issued;
  }

  /** The publisher of the email and whether the password is its; a decoy hash is checked for an unknown email. */
  private async checkPassword(input: LoginDto): Promise<{ publisher: Publisher | null; passwordOk: boolean }> {
    const publisher = await this.db.prisma.publisher.findUnique({ where: { email: input.email } });
    const hash = publisher?.passwordHash ?? (await passwordWork(decoyPasswordHash(this.config.passwordScryptLogN)));
    const passwordOk = await passwordWork(verifyPassword(input.password, hash));
    return { publisher, passwordOk };
  }

  /**
   * Replaces the key `publisher` was authenticated with, only while it is still the current one: a
   * rotation racing a login (or another rotation) never undoes it, so a stolen key cannot outlast
   * the owner's login by rotating at the same moment.
   */
  async rotateApiKey(publisher: Publisher): Promise<IssuedApiKey> {
    const issued = await issueApiKey(this.db.prisma, publisher.id, { apiKeyHash: publisher.apiKeyHash });
    if (!issued) throw unauthorized('This API key was replaced meanwhile; use the current one or log in');
    return issued;
  }

  /**
   * A new password, proven by the current one (checked within the account's password-check budget,
   * shared with payout changes); the API key rotates in the same write, so whoever held the old
   * password or key is out, and of the networks the account's logins are known from, only `network`
   * (the client's) is kept.
   */
  async changePassword(publisher: Publisher, input: ChangePasswordDto, network: string): Promise<IssuedApiKey> {
    if (passwordChecksFull()) throw passwordChecksBusy();
    await this.spendAttempt(confirmationsKey(publisher.id), PASSWORD_CONFIRMATIONS, 'password checks for this account');
    if (!(await passwordWork(verifyPassword(input.current_password, publisher.passwordHash))))
      throw unauthorized('current_password does not match');
    // Written only while the password just checked still stands: of two changes racing, one wins. One
    // transaction: a failed write leaves the old password, key and known networks as they were.
    const passwordHash = await passwordWork(hashPassword(input.new_password, this.config.passwordScryptLogN));
    const account = loginAccount(publisher.email);
    const issued = await this.db.prisma.$transaction(async (tx) => {
      const key = await issueApiKey(tx, publisher.id, { passwordHash: publisher.passwordHash }, { passwordHash });
      if (!key) return null;
      await this.knownNetworks.forget(tx, account);
      await this.knownNetworks.remember(tx, account, network, { publisherId: publisher.id, passwordHash });
      return key;
    });
    if (!issued) throw unauthorized('current_password does not match: the password changed meanwhile');
    return issued;
  }

  async update(
    publisher: Publisher,
    input: UpdatePublisherDto,
    confirmPassword: string | undefined,
  ): Promise<PublisherBody> {
    const changesPayout = input.payout_address !== undefined;
    if (changesPayout) {
      // Refused before the password is checked: bad input spends none of its confirmations.
      const named = input.payout_address;
      const unpayable = named ? ownAddressRole(this.chain, named) : undefined;
      if (named && unpayable)
        throw badRequest(
          `payout_address ${getAddress(named.toLowerCase())} is ${unpayable}: payments to it would fail or be lost. Name an address you hold`,
        );
      if (!confirmPassword) throw unauthorized('Changing payout_address requires the X-Confirm-Password header');
      const password = decodeHeaderText(confirmPassword);
      if (password === undefined)
        throw unauthorized("X-Confirm-Password is not a valid UTF-8'' ext-value (RFC 8187: percent-encoded UTF-8)");
      if (passwordChecksFull()) throw passwordChecksBusy();
      await this.spendAttempt(
        confirmationsKey(publisher.id),
        PASSWORD_CONFIRMATIONS,
        'X-Confirm-Password checks for this account',
      );
      if (!(await passwordWork(verifyPassword(password, publisher.passwordHash))))
        throw unauthorized('X-Confirm-Password does not match');
    }
    if (changesPayout) await this.namePayoutAddress(publisher, input);
    else if (input.name !== undefined)
      await this.db.prisma.publisher.update({ where: { id: publisher.id }, data: { name: input.name } });
    return publisherView(await this.db.prisma.publisher.findUniqueOrThrow({ where: { id: publisher.id } }));
  }

  /**
   * Writes the payout address (and the name, when it changes too) while the password the change was
   * confirmed with still stands. An address another publisher names is taken only with its proof
   * (payout_proof), checked before anything is written.
   */
  private async namePayoutAddress(publisher: Publisher, input: UpdatePublisherDto): Promise<void> {
    const address = input.payout_address ? getAddress(input.payout_address.toLowerCase()) : null;
    const proven = address !== null && input.payout_proof !== undefined;
    if (proven) await this.checkPayoutProof(publisher, address, input.payout_proof as Hex);
    const outcome = await this.payoutAddresses.name({
      publisherId: publisher.id,
      passwordHash: publisher.passwordHash,
      address,
      proven,
      ...(input.name !== undefined ? { name: input.name } : {}),
    });
    if (outcome === 'password-changed')
      throw unauthorized('X-Confirm-Password does not match: the password changed meanwhile');
    if (outcome === 'taken')
      throw new ApiError(
        409,
        `Another publisher names ${address} as its payout address. To name it too, prove you hold it: send payout_proof, the address's EIP-191 (personal_sign) signature of payout_proof_message; the proof takes it from any publisher that named it without one`,
        { payout_proof_message: payoutProofMessage(address as string, publisher.id) },
      );
  }

  /** 400 unless `signature` is the address's signature of this publisher's proof message; 503 if only the chain could tell, and it did not. */
  private async checkPayoutProof(publisher: Publisher, address: Address, signature: Hex): Promise<void> {
    const message = payoutProofMessage(address, publisher.id);
    const signed = await signedMessageBy(this.chain, { address, message, signature });
    if (signed === 'unchecked') throw unavailable('The payout_proof could not be checked on chain; retry later', 5);
    if (!signed) throw badRequest(`payout_proof is not a signature by ${address} of the text "${message}"`);
  }

  /** 429 beyond `budget`, before any password is looked at; counted in the database, shared by every instance. */
  private async spendAttempt(key: string, budget: AttemptBudget, what: string): Promise<void> {
    this.refuseIfBlocked(await this.attempts.spend(key, budget), budget, what);
  }

  private refuseIfBlocked(count: AttemptCount, budget: AttemptBudget, what: string): void {
    if (count.blocked) throw tooMany(count, budget, what);
  }
}

/**
 * A fresh key written by `client` while the row still matches `ifStill`, with `alongside`; null when
 * it no longer does (a login, a rotation or a password change got there first).
 */
async function issueApiKey(
  client: Prisma.TransactionClient,
  id: string,
  ifStill: { apiKeyHash?: string; passwordHash?: string },
  alongside: { passwordHash?: string } = {},
): Promise<IssuedApiKey | null> {
  const apiKey = generateApiKey();
  const { count } = await client.publisher.updateMany({
    where: { id, ...ifStill },
    data: { ...alongside, apiKeyHash: sha256Hex(apiKey) },
  });
  return count === 0 ? null : { publisher_id: id, api_key: apiKey };
}

/** The 429 of a blocked counter, with its Retry-After. */
function tooMany(count: AttemptCount & { blocked: true }, budget: AttemptBudget, what: string): ApiError {
  return new ApiError(
    429,
    `Too many ${what} (${budget.limit} per ${budget.ttl / 60_000} minutes); retry after the time in Retry-After`,
    {},
    { 'retry-after': String(count.retryAfterSeconds) },
  );
}

export function publisherView(publisher: Publisher): PublisherBody {
  return {
    publisher_id: publisher.id,
    email: publisher.email,
    name: publisher.name,
    payout_address: publisher.payoutAddress,
    payout_address_proven: publisher.payoutAddressProven,
    created_at: publisher.createdAt.toISOString(),
  };
}

/** The key logins to the account of `email` are counted under, registered or not. */
function loginAccount(email: string): string {
  return `login-${sha256Hex(email)}`;
}

/** A password hashed or checked in this process's turn (password.ts): 503 while too many wait, nothing changed. */
async function passwordWork<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof PasswordChecksBusy) throw passwordChecksBusy();
    throw error;
  }
}

const passwordChecksBusy = () =>
  unavailable('Too many password checks are waiting on this server; nothing was changed. Try again in a second', 1);

/** The counter of a publisher's password checks (PASSWORD_CONFIRMATIONS): X-Confirm-Password and password changes. */
const confirmationsKey = (publisherId: string) => `confirm-password-${publisherId}`;
