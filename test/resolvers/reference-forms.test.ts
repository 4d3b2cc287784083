/** The A2A forms of `_delegate` (DEL-31): which references name an agent, and where its base and card are. */
import { describe, expect, it } from 'vitest';
import { a2aLocation, isA2aReference } from '../../src/resolvers/reference-forms.js';

describe('A2A references (DEL-31)', () => {
  it('recognises a2a+http(s) base URLs and card URLs, and nothing else', () => {
    expect(isA2aReference('a2a+https://agents.example.com/a2a/forecast')).toBe(true);
    expect(isA2aReference('A2A+http://127.0.0.1:8787/a2a/x')).toBe(true);
    expect(isA2aReference('https://agents.example.com/a2a/forecast/.well-known/agent-card.json')).toBe(true);
    expect(isA2aReference('https://agents.example.com/.well-known/agent-card.json?v=2#top')).toBe(true);
    expect(isA2aReference('https://agents.example.com/a2a/forecast.json')).toBe(false);
    expect(isA2aReference('./.well-known/agent-card.json')).toBe(false);
    expect(isA2aReference('a2a+ftp://agents.example.com/x')).toBe(false);
    expect(isA2aReference('SummarizerAgent')).toBe(false);
  });

  it('finds the card below a base URL and the base above a card URL, dropping query and fragment', () => {
    expect(a2aLocation('a2a+http://127.0.0.1:8787/a2a/summarizer/')).toEqual({
      base: 'http://127.0.0.1:8787/a2a/summarizer',
      card: 'http://127.0.0.1:8787/a2a/summarizer/.well-known/agent-card.json',
    });
    expect(a2aLocation('https://agents.example.com/.well-known/agent-card.json?v=2#top')).toEqual({
      base: 'https://agents.example.com',
      card: 'https://agents.example.com/.well-known/agent-card.json',
    });
    expect(a2aLocation('a2a+https://')).toBeUndefined();
  });
});
