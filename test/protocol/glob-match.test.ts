/** Globs from documents and models (FILES-12, TOOL-21, WRK-3): picomatch's meaning, and a hostile glob ends within the budget instead of pinning the CPU. */
import { describe, expect, it } from 'vitest';
import { RequestError } from '../../src/protocol/errors.js';
import { compileGlob, firstMatches, GLOB_BUDGET_MS, GlobBudgetError } from '../../src/protocol/tools/glob-match.js';
import { isAllowedWorker } from '../../src/protocol/messages/workers.js';
import { ruleFor } from '../../src/protocol/tools/tool-rules.js';

/** The probe's pattern: `**a*a…*ab` with 25 stars, which backtracks for minutes on a 60-character name. */
const HOSTILE_PATH_GLOB = `**${'a*'.repeat(24)}ab`;
const HOSTILE_NAME_GLOB = `${'a*'.repeat(25)}b`;
const LONG_NAME = 'a'.repeat(60);

/** Runs `work` and says how long it took, in milliseconds. */
function timed(work: () => void): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

describe('globs matched by picomatch (FILES-12)', () => {
  it('keeps the listing meaning: * and ? within a folder, ** across, dotfiles like any file', () => {
    const matchers = [compileGlob('decks/*.txt'), compileGlob('**/*.pdf'), compileGlob('notes/?.md')];
    expect(firstMatches(matchers, ['decks/a.txt', 'decks/x/a.txt', 'a/b/c.pdf', 'c.pdf', 'notes/a.md', 'notes/ab.md', 'decks/.hidden.txt'])).toEqual([
      0, -1, 1, 1, 2, -1, 0,
    ]);
  });

  it('treats only * and ? as special in names (tool rules, worker allow-lists)', () => {
    const name = (glob: string, candidate: string) => firstMatches([compileGlob(glob, { wildcardsOnly: true })], [candidate])[0] === 0;
    expect(name('shell*', 'shell_run')).toBe(true);
    expect(name('e?ho', 'echo')).toBe(true);
    expect(name('e.ho', 'echo')).toBe(false);
    expect(name('{a,b}', 'a')).toBe(false);
    expect(name('{a,b}', '{a,b}')).toBe(true);
    expect(name('[x]', '[x]')).toBe(true);
    expect(name('*-x', 'team/a-x')).toBe(true);
  });

  it('ends a hostile path glob within the budget, refused with the glob named', () => {
    let caught: unknown;
    // Generous bound: the old regular expressions ran for minutes on this one name.
    const spent = timed(() => {
      try {
        firstMatches([compileGlob(HOSTILE_PATH_GLOB)], [LONG_NAME]);
      } catch (error) {
        caught = error;
      }
    });
    expect(caught).toBeInstanceOf(GlobBudgetError);
    expect((caught as GlobBudgetError).glob).toBe(HOSTILE_PATH_GLOB);
    expect(spent).toBeLessThan(GLOB_BUDGET_MS * 50);
  });

  it('ends a hostile tool rule within the budget as an invalid_request naming the rule (TOOL-21)', () => {
    let caught: unknown;
    const spent = timed(() => {
      try {
        ruleFor([{ tool: 'shell_*' }, { tool: HOSTILE_NAME_GLOB, allowed: false }], LONG_NAME);
      } catch (error) {
        caught = error;
      }
    });
    expect(caught).toBeInstanceOf(RequestError);
    expect((caught as RequestError).message).toContain('/config/toolRules/1/tool');
    expect(spent).toBeLessThan(GLOB_BUDGET_MS * 50);
  });

  it('ends a hostile worker allow-list within the budget (WRK-3)', () => {
    const spent = timed(() => expect(() => isAllowedWorker([HOSTILE_NAME_GLOB], LONG_NAME)).toThrow(GlobBudgetError));
    expect(spent).toBeLessThan(GLOB_BUDGET_MS * 50);
    expect(isAllowedWorker(['review-*'], 'review-deck')).toBe(true);
    expect(isAllowedWorker(['review-*'], 'draft')).toBe(false);
  });
  it('names the glob that ran out of budget, not the first that might have', () => {
    const matchers = [compileGlob('x*y*z', { wildcardsOnly: true }), compileGlob(HOSTILE_NAME_GLOB, { wildcardsOnly: true })];
    expect(() => firstMatches(matchers, [LONG_NAME])).toThrow(expect.objectContaining({ glob: HOSTILE_NAME_GLOB }));
  });
});
