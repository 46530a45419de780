import { BOT_CATALOGUE } from './catalogue';
import { classifyVisitor } from './classify';
import { BOT_CATEGORIES } from './types';

describe('BOT_CATALOGUE', () => {
  it('lists over a hundred crawlers in every category, each name once (in any case)', () => {
    expect(BOT_CATALOGUE.length).toBeGreaterThanOrEqual(100);
    for (const category of BOT_CATEGORIES) expect(BOT_CATALOGUE.some((bot) => bot.category === category)).toBe(true);
    const names = BOT_CATALOGUE.map((bot) => bot.name.toLowerCase());
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it('uses stateless, case-insensitive patterns', () => {
    for (const bot of BOT_CATALOGUE) expect([bot.name, bot.pattern.flags]).toEqual([bot.name, 'i']);
  });

  it('lets every entry whose name is its token win over the entries above it', () => {
    const selfNamed = BOT_CATALOGUE.filter((bot) => bot.pattern.test(bot.name));
    expect(selfNamed.length).toBeGreaterThan(BOT_CATALOGUE.length * 0.9);
    for (const bot of selfNamed) {
      expect([bot.name, classifyVisitor(bot.name)]).toEqual([
        bot.name,
        { kind: 'bot', name: bot.name, category: bot.category, action: expect.any(String) },
      ]);
    }
  });

  it('marks the robots.txt-only tokens', () => {
    const tokens = BOT_CATALOGUE.filter((bot) => bot.robotsTxtOnly).map((bot) => bot.name);
    expect(tokens).toEqual(expect.arrayContaining(['Google-Extended', 'Applebot-Extended']));
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(BOT_CATALOGUE)).toBe(true);
    expect(BOT_CATALOGUE.every((bot) => Object.isFrozen(bot))).toBe(true);
  });
});
