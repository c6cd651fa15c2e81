// Sentiment per party with the AFINN-165 lexicon of the `sentiment` package (negation-aware).
// Each turn gets AFINN's comparative score (sum of word valences / words); a party's score is the
// mean over its scored turns, squashed to -1..1.
import Sentiment from 'sentiment';
import { englishText, type AnalysisTurn, type Speaker } from './transcript.js';

const lexicon = new Sentiment();

export type SentimentLabel = 'positive' | 'neutral' | 'negative';

export interface PartySentiment {
  score: number;
  label: SentimentLabel;
  /** Per scored turn, in order (the performance score reads its trend). */
  turnScores: number[];
}

export function turnSentiment(text: string): number {
  return lexicon.analyze(text).comparative;
}

/** ±0.05 of comparative score ≈ one mildly valenced word in a 20-word turn: below it, neutral. */
export function labelOf(score: number): SentimentLabel {
  return score > 0.05 ? 'positive' : score < -0.05 ? 'negative' : 'neutral';
}

export function partySentiment(turns: AnalysisTurn[], speaker: Speaker): PartySentiment {
  const turnScores: number[] = [];
  for (const t of turns) {
    if (t.speaker !== speaker) continue;
    const text = englishText(t);
    if (text && text.trim()) turnScores.push(turnSentiment(text));
  }
  const mean = turnScores.length ? turnScores.reduce((a, b) => a + b, 0) / turnScores.length : 0;
  // AFINN valences run -5..5 per word; tanh keeps a handful of strong words from saturating.
  const score = Math.round(Math.tanh(mean) * 1000) / 1000;
  return { score, label: labelOf(score), turnScores };
}
