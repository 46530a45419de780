import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ChainContext } from '../chain/chain-context';
import type { ApiError } from '../http/api-error';
import { SIMULATIONS_IN_FLIGHT_PER_PAYER, SIMULATIONS_IN_FLIGHT_PER_SITE } from '../rate-limit/limits';
import type { SitePaymentTermsStore } from '../sites/site-payment-terms.store';
import type { PaymentStore } from './payment.store';
import { SimulationBudget } from './simulation-budget';

/*
 * SimulationBudget.simulating alone, with its storage failing: the counting's failures are lost,
 * never put in place of the simulation's own answer, and a slot is freed whatever the answer.
 * (Its limits against the real API, database and chain: payments.spec.ts.)
 */
describe('SimulationBudget.simulating', () => {
  const down = () => Promise.reject(new Error('storage down'));
  const budget = new SimulationBudget(
    {} as ChainContext,
    { hasPaidPublisherWithin: down } as unknown as PaymentStore,
    { publisherOf: down } as unknown as SitePaymentTermsStore,
    { increment: down } as unknown as ThrottlerStorage,
  );
  const refusal = new Error('the token refused it');

  it("answers with the simulation's own refusal when the refusals cannot be counted, and frees its slot", async () => {
    for (let i = 0; i <= SIMULATIONS_IN_FLIGHT_PER_SITE; i++)
      await expect(budget.simulating('site', 'payer', () => Promise.reject(refusal))).rejects.toBe(refusal);
    await expect(budget.simulating('site', 'payer', async () => 'simulated')).resolves.toBe('simulated');
  });

  it('turns one simulation past the slots away without running it, and takes it once a slot is free', async () => {
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    const running = Array.from({ length: SIMULATIONS_IN_FLIGHT_PER_SITE }, (_, i) =>
      budget.simulating('busy', `payer-${i}`, () => held),
    );
    let ran = false;
    const more = budget.simulating('busy', 'another payer', async () => void (ran = true));
    await expect(more).rejects.toMatchObject({
      detail: expect.stringMatching(/at once/),
      headers: { 'retry-after': '1' },
    });
    await more.catch((error: ApiError) => expect(error.getStatus()).toBe(429));
    expect(ran).toBe(false);
    await expect(budget.simulating('calm', 'another payer', async () => 'other site')).resolves.toBe('other site');
    answer();
    await Promise.all(running);
    await expect(budget.simulating('busy', 'another payer', async () => 'freed')).resolves.toBe('freed');
  });

  it("turns a payer's simulation past its own slots away, whatever the site, while other payers are simulated", async () => {
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    const running = Array.from({ length: SIMULATIONS_IN_FLIGHT_PER_PAYER }, (_, i) =>
      budget.simulating(`site-${i}`, '0xSlow', () => held),
    );
    let ran = false;
    const more = budget.simulating('site-x', '0xslow', async () => void (ran = true)); // any spelling of the address
    await expect(more).rejects.toMatchObject({ detail: expect.stringMatching(/from this payer .* at once/) });
    expect(ran).toBe(false);
    await expect(budget.simulating('site-0', '0xother', async () => 'other payer')).resolves.toBe('other payer');
    answer();
    await Promise.all(running);
    await expect(budget.simulating('site-x', '0xslow', async () => 'freed')).resolves.toBe('freed');
  });
});
