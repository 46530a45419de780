import { pageUrl } from './page-url';
import { refusalOf } from './refusals';

const refusal = (text: string) => {
  try {
    pageUrl(text);
  } catch (error) {
    return refusalOf(error);
  }
  throw new Error(`${text} was accepted`);
};

describe('pageUrl', () => {
  it('takes absolute http and https URLs', () => {
    expect(pageUrl('https://news.example/a?b=c#d').href).toBe('https://news.example/a?b=c#d');
    expect(pageUrl('http://127.0.0.1:8080/x').port).toBe('8080');
  });

  it.each([
    '/relative',
    'news.example/a',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'ftp://a.example/',
    `https://a.example/${'x'.repeat(8200)}`,
  ])('refuses %s as invalid_url', (text) => {
    expect(refusal(text)).toMatchObject({ code: 'invalid_url' });
  });

  it('refuses credentials in the URL without echoing them', () => {
    const refused = refusal('https://user:hunter2@news.example/a');
    expect(refused).toMatchObject({ code: 'invalid_url', url: 'https://news.example/a' });
    expect(JSON.stringify(refused)).not.toContain('hunter2');
  });
});
