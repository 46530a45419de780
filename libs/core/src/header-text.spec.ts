import { decodeHeaderText, encodeHeaderText } from './header-text';

describe('header text', () => {
  it('carries any text, spaces at either end and letters beyond Latin-1 included, in header-safe ASCII', () => {
    for (const text of ['correct horse battery', ' пароль с пробелом ', 'mot de passe é', '密码🔑', "it's 100%"]) {
      const value = encodeHeaderText(text);
      expect(value).toMatch(/^UTF-8''[\x21-\x7e]*$/);
      expect(decodeHeaderText(value)).toBe(text);
    }
  });

  it('reads a plain value as it came, the prefix in any case, and refuses a malformed escape', () => {
    expect(decodeHeaderText('plain 100% value')).toBe('plain 100% value');
    expect(decodeHeaderText("utf-8''caf%C3%A9")).toBe('café');
    expect(decodeHeaderText("UTF-8''%E0%A4")).toBeUndefined();
    expect(decodeHeaderText("UTF-8''%zz")).toBeUndefined();
  });
});
