import { terminalSafe } from './terminal-text';

describe('terminalSafe', () => {
  it('writes every character a terminal would act on as its \\u escape, and keeps tabs, newlines and text', () => {
    const hostile = 'Bad\u001b]52;c;Y3VybA==\u0007\u001b[2J\r\u009b31m\u202eevil\u2066x\u007f';
    expect(terminalSafe(hostile)).toBe(
      'Bad\\u001b]52;c;Y3VybA==\\u0007\\u001b[2J\\u000d\\u009b31m\\u202eevil\\u2066x\\u007f',
    );
    expect(terminalSafe('a\tb\nc é 中 🙂')).toBe('a\tb\nc é 中 🙂');
  });

  it('writes the invisible characters that make one text read as another as their escapes', () => {
    // Direction marks move the neutral characters around them (a path's "." and "/"); zero-width and
    // tag characters hide inside a name; a line or paragraph separator breaks a line like a newline.
    const hidden = 'a\u200eb\u200fc\u061cd\u200be\ufeff\u2060f\u00adg\u2028h\u2029i\u{e0041}j';
    expect(terminalSafe(hidden)).toBe(
      'a\\u200eb\\u200fc\\u061cd\\u200be\\ufeff\\u2060f\\u00adg\\u2028h\\u2029i\\udb40\\udc41j',
    );
    expect(JSON.parse(terminalSafe(JSON.stringify(hidden)))).toBe(hidden);
    // Characters shown as nothing (fillers, a grapheme joiner, variation selectors, an unassigned
    // ignorable) and a surrogate alone.
    expect(terminalSafe('G\u3164P\u115fT\uffa0B\u034fo\ufe0ft\u{e0100}\u2065\ud800x')).toBe(
      'G\\u3164P\\u115fT\\uffa0B\\u034fo\\ufe0ft\\udb40\\udd00\\u2065\\ud800x',
    );
  });

  it('keeps JSON text valid JSON of the same value', () => {
    const json = JSON.stringify({ detail: 'x\u009by\u202ez' });
    expect(JSON.parse(terminalSafe(json))).toEqual({ detail: 'x\u009by\u202ez' });
    expect(terminalSafe(json)).not.toMatch(/[\u009b\u202e]/);
  });
});
