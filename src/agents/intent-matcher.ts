// Matches an utterance against intents' example phrases: normalized text (spoken numbers as
// digits), scored by the better of bigram similarity (Sørensen–Dice, string-similarity-js) and the
// share of the example's content words the caller said (word order and extra words do not matter).
import { stringSimilarity } from 'string-similarity-js';
import type { AgentIntent } from './types.js';
import { FUNCTION_WORDS, normalize, wordsToDigits } from './text.js';

const STOP_WORDS = new Set([
  ...FUNCTION_WORDS,
  'please',
  'can',
  'could',
  'would',
  'do',
  'does',
  'what',
  'want',
  'like',
  'id',
  'im',
  'um',
  'uh',
  'so',
  'hi',
  'hello',
  'hey',
  'be',
  'with',
  'this',
  'that',
]);

export interface IntentMatch {
  intent: AgentIntent;
  score: number;
}

/** A match at or above this is acted on; between CLARIFY and MATCH the agent asks. */
export const MATCH_THRESHOLD = 0.6;
export const CLARIFY_THRESHOLD = 0.35;

const contentWords = (text: string): string[] => text.split(' ').filter((w) => w && !STOP_WORDS.has(w) && !/^\d+$/.test(w));

function score(utterance: string, uWords: Set<string>, example: string): number {
  const ex = wordsToDigits(example);
  const dice = stringSimilarity(utterance, ex);
  const exWords = contentWords(ex);
  if (exWords.length === 0) return dice;
  // Word overlap, lenient to recognizer slips: a word counts when some said word is close to it.
  let hit = 0;
  for (const w of exWords) {
    if (uWords.has(w)) hit++;
    else if (w.length > 3 && [...uWords].some((u) => stringSimilarity(u, w, 2) >= 0.75)) hit += 0.8;
  }
  return Math.max(dice, hit / exWords.length);
}

/** Intents ranked by their best example's score, best first. */
export function rankIntents(utterance: string, intents: readonly AgentIntent[]): IntentMatch[] {
  const u = wordsToDigits(utterance);
  const uWords = new Set(contentWords(u));
  return intents.map((intent) => ({ intent, score: Math.max(0, ...intent.examples.map((e) => score(u, uWords, e))) })).sort((a, b) => b.score - a.score);
}

/** True when the utterance contains one of the phrases (normalized, whole words). */
export function containsPhrase(utterance: string, phrases: readonly string[]): string | null {
  const u = ` ${normalize(utterance)} `;
  for (const p of phrases) {
    const n = normalize(p);
    if (n && u.includes(` ${n} `)) return p;
  }
  return null;
}

const NEGATIVE = [
  'angry',
  'terrible',
  'awful',
  'useless',
  'ridiculous',
  'frustrated',
  'upset',
  'worst',
  'hate',
  'not working',
  'broken',
  'complaint',
  'stupid',
];
const POSITIVE = ['thanks', 'thank you', 'great', 'perfect', 'wonderful', 'excellent', 'happy', 'good'];

/** A coarse sentiment of what the customer said (for escalation context). */
export function sentimentOf(utterances: readonly string[]): 'positive' | 'neutral' | 'negative' {
  let s = 0;
  for (const u of utterances) {
    if (containsPhrase(u, NEGATIVE)) s--;
    if (containsPhrase(u, POSITIVE)) s++;
  }
  return s < 0 ? 'negative' : s > 0 ? 'positive' : 'neutral';
}
