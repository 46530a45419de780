import { USDC_ABI } from './usdc-abi';

describe('USDC_ABI', () => {
  const named = (name: string) => USDC_ABI.filter((entry) => entry.name === name);

  it('has both transferWithAuthorization forms: (v, r, s) and bytes', () => {
    expect(
      named('transferWithAuthorization')
        .map((entry) => entry.inputs.length)
        .sort(),
    ).toEqual([7, 9]);
  });

  it('has the views and events that prove a payment', () => {
    expect(named('authorizationState')).toHaveLength(1);
    expect(named('balanceOf')).toHaveLength(1);
    expect(named('Transfer').map((entry) => entry.type)).toEqual(['event']);
    expect(named('AuthorizationUsed').map((entry) => entry.type)).toEqual(['event']);
    expect(named('AuthorizationCanceled').map((entry) => entry.type)).toEqual(['event']);
  });
});
