import { fieldErrors } from './field-errors';

describe('fieldErrors', () => {
  it('keys each item by its place in the body', () => {
    const errors = fieldErrors([
      { loc: ['body', 'default_price_usd'], msg: 'Price must be at most 1 USD', type: 'price_range' },
      { loc: ['body', 'rules', 2, 'path'], msg: '** is not supported', type: 'pattern_globstar' },
      { loc: ['body', 'rules', 3, 'path_pattern'], msg: 'Pattern is empty', type: 'pattern_empty' },
    ]);
    expect(errors.byField).toEqual({
      default_price_usd: 'Price must be at most 1 USD',
      'rules.2.path': '** is not supported',
      'rules.3.path': 'Pattern is empty',
    });
    expect(errors.general).toEqual([]);
  });

  it('keeps the first message of a field and lists body-wide ones as general', () => {
    const errors = fieldErrors([
      { loc: ['body'], msg: 'Request body must be a JSON object', type: 'dict_type' },
      { loc: ['body', 'rules'], msg: 'first', type: 'too_long' },
      { loc: ['body', 'rules'], msg: 'second', type: 'list_type' },
      { loc: ['query', 'limit'], msg: 'limit must be 1..100', type: 'int_type' },
    ]);
    expect(errors.byField).toEqual({ rules: 'first' });
    expect(errors.general).toEqual(['Request body must be a JSON object', 'limit must be 1..100']);
  });
});
