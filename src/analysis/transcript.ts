// The stored transcript as the analyser sees it: turns with the English text it scores.
// Spanish (and any non-English) turns are analysed through their stored English translation
// (the pipeline stores it with the turn); a turn without one keeps its timing and is matched by the
// compliance rules in its own words, but is left out of the English lexicon scoring.

export type Speaker = 'agent' | 'customer';

export interface AnalysisTurn {
  sequence: number;
  speaker: Speaker;
  language: string | null;
  text: string;
  translation: { language: string; text: string } | null;
  /** Seconds on the session timeline (null for turns stored without timing). */
  startTime: number | null;
  endTime: number | null;
}

/** The English text of a turn: its own text when spoken in English, else its English translation. */
export function englishText(t: AnalysisTurn): string | null {
  if (!t.language || t.language.startsWith('en')) return t.text;
  if (t.translation?.language?.startsWith('en')) return t.translation.text;
  return null;
}

/** Lower-case word tokens (letters, digits, apostrophes). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}

/** Sentences of a turn (recognizers rarely punctuate: a turn without punctuation is one sentence). */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}
