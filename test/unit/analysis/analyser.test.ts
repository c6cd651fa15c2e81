// The embedded analyser's parts on hand-made transcripts: Luhn and spoken digits, compliance rules,
// sentiment of a rude customer, Spanish turns through their translation, action items, performance.
import { describe, expect, it } from 'vitest';
import {
  actionItems,
  analyseTranscript,
  checkCompliance,
  digitRuns,
  keywords,
  luhnValid,
  partySentiment,
  spokenCardNumber,
  type AnalysisTurn,
} from '../../../src/analysis/index.js';
import { defined } from '../../helpers/defined.js';

let seq = 0;
const turn = (
  speaker: 'agent' | 'customer',
  text: string,
  start: number | null = null,
  end: number | null = null,
  extra: Partial<AnalysisTurn> = {},
): AnalysisTurn => ({ sequence: ++seq, speaker, language: 'en', text, translation: null, startTime: start, endTime: end, ...extra });

describe('card numbers', () => {
  it('checks Luhn against known test numbers', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('5555555555554444')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
  });
  it('reads digits spoken in English and Spanish words or written as digits', () => {
    expect(digitRuns('my number is four one one one and then stop')).toEqual(['4111']);
    expect(digitRuns('cinco cinco cinco cinco 5555 5555 cinco cinco cuatro cuatro')).toEqual(['5555555555555544']);
    expect(spokenCardNumber('it is 4111 1111 1111 1111 thanks')).toBe('4111111111111111');
    expect(spokenCardNumber('call me at five five five one two three four')).toBeNull();
    expect(spokenCardNumber('four one one one one one one one one one one one one one one two')).toBeNull(); // fails Luhn
  });
});

describe('compliance', () => {
  it('flags a missing disclosure, a forbidden phrase and a spoken card number', () => {
    const turns = [
      turn('agent', 'Hi there, I can offer you a guaranteed refund today'),
      turn('customer', 'ok my card is four one one one one one one one one one one one one one one one'),
    ];
    const r = checkCompliance(turns, { required_disclosures: ['this call is recorded'], forbidden_phrases: ['guaranteed refund'] });
    expect(r.status).toBe('failed');
    expect(r.flags.map((f) => f.type)).toEqual(['missing_disclosure', 'forbidden_phrase', 'card_number_spoken']);
    expect(r.flags[2]).toMatchObject({ speaker: 'customer', sequence: defined(turns[1]).sequence });
    const ok = checkCompliance([turn('agent', 'This call is recorded, how can I help?')], { required_disclosures: ['this call is RECORDED'] });
    expect(ok).toEqual({ status: 'passed', flags: [] });
  });
});

describe('sentiment', () => {
  it('scores a rude customer negative and a pleased one positive', () => {
    expect(partySentiment([turn('customer', 'you are useless and stupid, this is awful')], 'customer').label).toBe('negative');
    expect(partySentiment([turn('customer', 'thank you, that is great and very helpful')], 'customer').label).toBe('positive');
  });
  it('reads Spanish turns through their stored English translation', () => {
    const es = turn('customer', 'esto es horrible', null, null, { language: 'es', translation: { language: 'en', text: 'this is horrible' } });
    expect(partySentiment([es], 'customer').label).toBe('negative');
    const untranslated = turn('customer', 'esto es horrible', null, null, { language: 'es' });
    expect(partySentiment([untranslated], 'customer')).toMatchObject({ label: 'neutral', turnScores: [] });
  });
});

describe('content', () => {
  it('finds keywords and action items with assignees and priorities', () => {
    const turns = [
      turn('customer', 'My router keeps dropping. The router light is red. Can you send a technician today?'),
      turn('agent', 'I will book a technician for tomorrow.'),
    ];
    expect(keywords(turns).slice(0, 2)).toEqual(['router', 'technician']);
    expect(actionItems(turns)).toEqual([
      { description: 'Can you send a technician today?', assignee: 'agent', priority: 'high' },
      { description: 'I will book a technician for tomorrow.', assignee: 'agent', priority: 'medium' },
    ]);
  });
});

describe('performance', () => {
  it('rewards quick answers and balanced talk, punishes interruptions', () => {
    const good = [
      turn('customer', 'hello I need help', 0, 2),
      turn('agent', 'sure, happy to help', 2.5, 4),
      turn('customer', 'thanks great', 4.5, 5.5),
      turn('agent', 'you are welcome', 6, 7),
    ];
    const bad = [
      turn('customer', 'hello I need help with my bill please', 0, 6),
      turn('agent', 'no wait listen to me now this is how it works and you are wrong', 3, 20),
      turn('customer', 'this is awful', 28, 29),
      turn('agent', 'ok', 27, 40),
    ];
    const g = analyseTranscript(good, { include: ['performance'], profile: 'default', rules: {} }).performance!;
    const b = analyseTranscript(bad, { include: ['performance'], profile: 'default', rules: {} }).performance!;
    expect(g.score).toBeGreaterThan(80);
    expect(b.score).toBeLessThan(50);
    expect(b.interruptions).toBe(2);
    expect(g.mean_response_latency_seconds).toBe(0.5);
  });
});
