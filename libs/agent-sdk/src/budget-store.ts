/*
 * Where an agent's spending lives. The default is this process's memory; a caller passes a store
 * to share one budget between processes or keep it across restarts (createFileBudgetStore, or
 * its own on a database). Every method is atomic in the store: two agents on one store can never
 * together reserve more than the limit.
 */

export interface BudgetState {
  /** Paid, in micro-USD; includes reservations of processes that died before settling (they may have paid). */
  spentMicros: bigint;
  /** Reserved by payments in flight, in micro-USD. */
  reservedMicros: bigint;
  payments: number;
}

export interface Reservation {
  id: string;
  micros: bigint;
}

export interface BudgetStore {
  /** Reserves `micros` when spent + reserved + micros ≤ `limitMicros`, in one atomic step; null when it does not fit. */
  reserve(micros: bigint, limitMicros: bigint): Promise<{ reservation: Reservation; state: BudgetState } | null>;
  /** Ends a reservation: `charged` moves it to spent (one payment more), otherwise frees it. */
  settle(reservation: Reservation, charged: boolean): Promise<BudgetState>;
  /**
   * Takes `micros` off what was spent (never below zero): money that came back, such as a
   * channel's withdrawn deposit. Optional: a store without it keeps counting that money as spent.
   */
  credit?(micros: bigint): Promise<BudgetState>;
  /** The state now (what other processes spent included). */
  read(): Promise<BudgetState>;
  /** The state as this process last saw it, without waiting: for a synchronous summary. */
  lastSeen(): BudgetState;
}

export const EMPTY_BUDGET: BudgetState = { spentMicros: 0n, reservedMicros: 0n, payments: 0 };

/** One process's budget, in memory: what createAgent uses when given no store. */
export function createMemoryBudgetStore(): BudgetStore {
  let state = EMPTY_BUDGET;
  const reservations = new Set<string>();
  let next = 0;
  return {
    async reserve(micros, limitMicros) {
      if (state.spentMicros + state.reservedMicros + micros > limitMicros) return null;
      const reservation = { id: String(next++), micros };
      reservations.add(reservation.id);
      state = { ...state, reservedMicros: state.reservedMicros + micros };
      return { reservation, state };
    },
    async settle(reservation, charged) {
      if (!reservations.delete(reservation.id)) return state;
      state = {
        spentMicros: state.spentMicros + (charged ? reservation.micros : 0n),
        reservedMicros: state.reservedMicros - reservation.micros,
        payments: state.payments + (charged ? 1 : 0),
      };
      return state;
    },
    async credit(micros) {
      state = { ...state, spentMicros: state.spentMicros > micros ? state.spentMicros - micros : 0n };
      return state;
    },
    read: async () => state,
    lastSeen: () => state,
  };
}
