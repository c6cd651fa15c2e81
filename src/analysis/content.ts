// What was said: keywords (term frequency without stop words), an extractive summary (the
// sentences richest in those keywords, in call order) and action items (commitments and requests).
import { eng as ENGLISH_STOPWORDS, removeStopwords } from 'stopword';
import { englishText, sentences, words, type AnalysisTurn, type Speaker } from './transcript.js';

/** Call fillers the stop-word list does not know. */
const FILLERS = [
  'um',
  'uh',
  'yeah',
  'okay',
  'ok',
  'hello',
  'hi',
  'thanks',
  'thank',
  'please',
  'just',
  'like',
  'know',
  'well',
  'yes',
  'right',
  'oh',
  'gonna',
  'wanna',
];
const STOPWORDS = [...ENGLISH_STOPWORDS, ...FILLERS];

interface Sentence {
  speaker: Speaker;
  text: string;
  order: number;
}

function englishSentences(turns: AnalysisTurn[]): Sentence[] {
  const out: Sentence[] = [];
  for (const t of turns) {
    const text = englishText(t);
    if (!text) continue;
    for (const s of sentences(text)) out.push({ speaker: t.speaker, text: s, order: out.length });
  }
  return out;
}

const contentWords = (text: string): string[] => removeStopwords(words(text), STOPWORDS).filter((w) => w.length > 2 && !/^\d+$/.test(w));

/** Terms by frequency (ties: first mention first), at most `limit`. */
export function keywords(turns: AnalysisTurn[], limit = 10): string[] {
  const freq = new Map<string, number>();
  for (const s of englishSentences(turns)) for (const w of contentWords(s.text)) freq.set(w, (freq.get(w) ?? 0) + 1);
  return [...freq.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([w]) => w);
}

/**
 * Extractive summary: each sentence scores the summed frequency of its content words, divided by
 * the square root of its length (long rambling sentences do not win by size); the best `max`
 * sentences are joined in the order they were said, each with its speaker.
 */
export function extractiveSummary(turns: AnalysisTurn[], max = 3): string {
  const all = englishSentences(turns);
  const freq = new Map<string, number>();
  for (const s of all) for (const w of contentWords(s.text)) freq.set(w, (freq.get(w) ?? 0) + 1);
  const scored = all
    .map((s) => {
      const cw = contentWords(s.text);
      return { s, score: cw.length ? cw.reduce((a, w) => a + (freq.get(w) ?? 0), 0) / Math.sqrt(cw.length) : 0 };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.s.order - b.s.order)
    .slice(0, max)
    .sort((a, b) => a.s.order - b.s.order);
  if (scored.length === 0) return 'No substantive speech was transcribed.';
  return scored.map(({ s }) => `${s.speaker === 'agent' ? 'Agent' : 'Customer'}: ${capitalise(s.text)}${/[.!?]$/.test(s.text) ? '' : '.'}`).join(' ');
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

export interface ActionItem {
  description: string;
  assignee: Speaker;
  priority: 'high' | 'medium' | 'low';
}

/** A speaker committing to do something: the item is theirs. */
const COMMITMENT = /\b(i will|i'll|we will|we'll|i am going to|i'm going to|we are going to|we're going to|let me|i can send|i can call)\b/;
/** A speaker asking the other party to do something: the item is the other party's. */
const REQUEST = /\b(can you|could you|would you|will you|i need you to|please (send|call|check|email|update|cancel|confirm|reset|change|fix)|make sure)\b/;
const URGENT = /\b(urgent|urgently|asap|immediately|right away|today|now)\b/;
const SOON = /\b(tomorrow|this week|soon|by friday|by monday)\b/;

export function actionItems(turns: AnalysisTurn[]): ActionItem[] {
  const items: ActionItem[] = [];
  for (const s of englishSentences(turns)) {
    const lower = s.text.toLowerCase();
    let assignee: Speaker | null = null;
    if (COMMITMENT.test(lower)) assignee = s.speaker;
    else if (REQUEST.test(lower)) assignee = s.speaker === 'agent' ? 'customer' : 'agent';
    if (!assignee) continue;
    const priority = URGENT.test(lower) ? 'high' : SOON.test(lower) ? 'medium' : 'low';
    items.push({ description: capitalise(s.text), assignee, priority });
  }
  return items;
}
