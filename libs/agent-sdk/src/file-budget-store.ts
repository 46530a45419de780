/*
 * A budget kept in one JSON file, shared by every process that opens it: a crawler restarted
 * mid-run continues from what it spent, and two crawlers on one file never together exceed it.
 * Every change holds a lock file (created with O_EXCL, so one holder at a time), reads the file,
 * writes a temporary copy, fsyncs and renames it over the old one: a reader sees the old or the
 * new budget, never half of one. A reservation of a process that died before settling stays
 * counted (as spent: its payment may have gone through), so a crash never frees money.
 *
 * A file that does not exist when a store first looks is a new budget; once a store has seen it, a
 * file gone (deleted, or emptied to null) is refused, never read as nothing spent. A symbolic link
 * is followed to its file, so two paths to one file share one budget and one lock.
 */

import { randomUUID } from 'node:crypto';
import type { BudgetState, BudgetStore, Reservation } from './budget-store';
import {
  acquireLock,
  isRunning,
  processHost,
  readJsonFile,
  realFilePath,
  seesPidsOf,
  writeJsonAtomically,
} from './locked-file';

export interface FileBudgetStoreOptions {
  /** How long to wait for another process's lock before failing (and not paying); default 10 000 ms. */
  lockTimeoutMs?: number;
  /** A lock older than this is taken to be left by a crashed process; default 30 000 ms. */
  staleLockMs?: number;
}

interface StoredBudget {
  version: 1;
  /** Names this budget, from the file's creation: a file made anew after a store saw another is refused. Absent in older files. */
  budget_id?: string;
  spent_micros: string;
  payments: number;
  reservations: Record<string, { micros: string; pid: number; host: string }>;
}

const EMPTY: StoredBudget = { version: 1, spent_micros: '0', payments: 0, reservations: {} };

export function createFileBudgetStore(givenPath: string, options: FileBudgetStoreOptions = {}): BudgetStore {
  const path = realFilePath(givenPath, 'budget file');
  const lockPath = `${path}.lock`;
  const lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  const staleLockMs = options.staleLockMs ?? 30_000;
  const host = processHost();
  // Whether this store has seen the file, and the budget it held: until then, a missing file is a new budget.
  let known = false;
  let budgetId: string | undefined;
  const load = (): StoredBudget => {
    const { stored, existed } = readStored(path, known);
    if (known && stored.budget_id !== budgetId)
      throw new Error(`${path} now holds another budget than the one this process spent from: not paying`);
    if (!existed) return { ...stored, budget_id: randomUUID() };
    known = true;
    budgetId = stored.budget_id;
    return withDeadReservationsSpent(stored);
  };
  let seen = stateOf(load());

  /** Runs `change` on the file's content under the lock and writes back what it returns. */
  async function update<T>(change: (stored: StoredBudget) => { next: StoredBudget; result: T }): Promise<T> {
    const release = await acquireLock(lockPath, {
      timeoutMs: lockTimeoutMs,
      staleMs: staleLockMs,
      busy: `The budget file is locked by another process (${lockPath}); not paying`,
    });
    try {
      const { next, result } = change(load());
      // Broken while this process was stopped (by another that took it for dead): writing now would
      // undo what the other wrote since. Not paying is the safe answer.
      if (!release.stillHeld())
        throw new Error(`The budget file's lock (${lockPath}) was taken by another process meanwhile; not paying`);
      writeJsonAtomically(path, next);
      known = true;
      budgetId = next.budget_id;
      seen = stateOf(next);
      return result;
    } finally {
      release();
    }
  }

  return {
    reserve: (micros, limitMicros) =>
      update((stored) => {
        const state = stateOf(stored);
        if (state.spentMicros + state.reservedMicros + micros > limitMicros) return { next: stored, result: null };
        const reservation: Reservation = { id: `${host}:${process.pid}:${randomUUID()}`, micros };
        const next = {
          ...stored,
          reservations: {
            ...stored.reservations,
            [reservation.id]: { micros: micros.toString(), pid: process.pid, host },
          },
        };
        return { next, result: { reservation, state: stateOf(next) } };
      }),
    settle: (reservation, charged) =>
      update((stored) => {
        // Gone: counted as spent already (this process was taken for dead), or settled twice.
        if (!stored.reservations[reservation.id]) return { next: stored, result: stateOf(stored) };
        const { [reservation.id]: _settled, ...rest } = stored.reservations;
        const next: StoredBudget = {
          ...stored,
          spent_micros: (BigInt(stored.spent_micros) + (charged ? reservation.micros : 0n)).toString(),
          payments: stored.payments + (charged ? 1 : 0),
          reservations: rest,
        };
        return { next, result: stateOf(next) };
      }),
    credit: (micros) =>
      update((stored) => {
        const spent = BigInt(stored.spent_micros);
        const next: StoredBudget = { ...stored, spent_micros: (spent > micros ? spent - micros : 0n).toString() };
        return { next, result: stateOf(next) };
      }),
    async read() {
      seen = stateOf(load());
      return seen;
    },
    lastSeen: () => seen,
  };
}

function stateOf(stored: StoredBudget): BudgetState {
  const reserved = Object.values(stored.reservations).reduce((sum, r) => sum + BigInt(r.micros), 0n);
  return { spentMicros: BigInt(stored.spent_micros), reservedMicros: reserved, payments: stored.payments };
}

/** Reservations of processes whose pids this one sees (seesPidsOf) that no longer run become spending: they may have paid. */
function withDeadReservationsSpent(stored: StoredBudget): StoredBudget {
  let spent = BigInt(stored.spent_micros);
  const reservations: StoredBudget['reservations'] = {};
  for (const [id, r] of Object.entries(stored.reservations)) {
    if (seesPidsOf(r.host) && !isRunning(r.pid)) spent += BigInt(r.micros);
    else reservations[id] = r;
  }
  return { ...stored, spent_micros: spent.toString(), reservations };
}

/** `known`: the store has seen the file before, so its absence is a loss, not a new budget. */
function readStored(path: string, known: boolean): { stored: StoredBudget; existed: boolean } {
  const raw = readJsonFile(path);
  if (raw === undefined && known)
    throw new Error(
      `${path} is gone: not paying (it held what was spent; restore it, or remove it only to start a new budget)`,
    );
  const parsed = (raw === undefined ? EMPTY : raw) as StoredBudget;
  // A file we cannot read is not an empty budget: refuse to pay rather than start from zero.
  if (
    parsed?.version !== 1 ||
    !/^\d+$/.test(parsed.spent_micros) ||
    !Number.isSafeInteger(parsed.payments) ||
    typeof parsed.reservations !== 'object' ||
    parsed.reservations === null ||
    !Object.values(parsed.reservations).every(isReservation)
  ) {
    throw new Error(`${path} is not a Crawlgate budget file`);
  }
  return { stored: parsed, existed: raw !== undefined };
}

function isReservation(value: unknown): boolean {
  const r = value as StoredBudget['reservations'][string] | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.micros === 'string' &&
    /^\d+$/.test(r.micros) &&
    Number.isSafeInteger(r.pid) &&
    r.pid > 0 &&
    typeof r.host === 'string'
  );
}
