/** Unit tests of src/protocol/tools/delegate-names.ts: what a delegate name is, what it may stand for, and the load checks of config.delegates (DEL-21). */
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { delegateNameProblem, delegateRegistryProblems, delegateTargetProblem, isDelegateName } from '../../src/protocol/tools/delegate-names.js';
import { RequestError } from '../../src/protocol/errors.js';
import { validateRequest } from '../../src/protocol/messages/load-request.js';

describe('delegate names (DEL-21)', () => {
  it.each(['SummarizerAgent', 'translator_delegate', 'speaker-EN', '2fast', 'a'.repeat(64)])('takes %s for a name', (name) => {
    expect(isDelegateName(name)).toBe(true);
    expect(delegateNameProblem(name)).toBeUndefined();
  });

  it.each([
    'anonymous',
    './summarizer.json',
    'summarizer.json',
    'agents/summarizer',
    'http://example.com/a',
    'Summarizer#sha256-x',
    '',
    'a'.repeat(65),
    'two words',
  ])('never takes %j for a name', (reference) => {
    expect(isDelegateName(reference)).toBe(false);
    expect(delegateNameProblem(reference)).toBeDefined();
  });
});

describe('what a name may stand for (DEL-21)', () => {
  it.each(['./summarizer.json', '../common/x.json', 'agents/s.json', './s.json#sha256-abc', 'http://example.com/agents/speaker_EN', 'https://h:8080/x.json'])(
    'accepts %s',
    (target) => expect(delegateTargetProblem(target)).toBeUndefined(),
  );

  it.each<[unknown, string]>([
    ['Other', 'never for another name'],
    ['anonymous', 'never for another name'],
    ['./summarizer.txt', 'does not end in .json'],
    ['/abs/s.json', 'is absolute'],
    ['C:/s.json', 'is absolute'],
    ['a\\b.json', 'backslash'],
    ['%2e%2e/s.json', 'backslash, "%"'],
    ['ftp://h/s.json', 'scheme'],
    ['http://', 'is not a URL'],
    ['', 'got ""'],
    [5, 'got 5'],
  ])('refuses %j (%s)', (target, why) => {
    expect(delegateTargetProblem(target)).toContain(why);
  });

  it('reports each bad entry of config.delegates at its own pointer', () => {
    expect(delegateRegistryProblems({ Good: './g.json', 'bad name': './b.json', Chain: 'Good', anonymous: './a.json' }).map((p) => p.pointer)).toEqual([
      '/config/delegates/bad name',
      '/config/delegates/Chain',
      '/config/delegates/anonymous',
    ]);
    expect(delegateRegistryProblems(undefined)).toEqual([]);
  });
});

describe('config.delegates on load (DOC-5, DEL-21)', () => {
  const load = (delegates: unknown) => validateRequest({ config: { delegates }, context: [], schema: true }, '/r/doc.json', defaultHandlers());

  it('keeps valid names in the canonical document', () => {
    expect(load({ SummarizerAgent: './summarizer.json' }).document.config?.delegates).toEqual({ SummarizerAgent: './summarizer.json' });
  });

  it('refuses bad entries with the document, the pointer and what was expected', () => {
    try {
      load({ SummarizerAgent: './summarizer.txt', 'a/b': './x.json', Ok: 5 });
    } catch (error) {
      expect(error).toBeInstanceOf(RequestError);
      const problems = (error as RequestError).problems;
      expect(problems.map((problem) => [problem.document, problem.pointer])).toEqual([['/r/doc.json', '/config/delegates/Ok']]);
      expect(problems[0]?.message).toBe('Expected string.');
      return;
    }
    throw new Error('Expected the document to be refused.');
  });

  it('refuses names and targets the schema cannot judge, each at its pointer', () => {
    try {
      load({ SummarizerAgent: './summarizer.txt', 'a/b': './x.json' });
    } catch (error) {
      const problems = (error as RequestError).problems;
      expect(problems.map((problem) => problem.pointer)).toEqual(['/config/delegates/SummarizerAgent', '/config/delegates/a~1b']);
      expect(problems[0]?.message).toContain('does not end in .json');
      expect(problems[1]?.message).toContain('Expected a delegate name');
      return;
    }
    throw new Error('Expected the document to be refused.');
  });
});
