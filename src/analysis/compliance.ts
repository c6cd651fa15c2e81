// Compliance rules an organization configures (organizations.compliance_rules, README "Analysis"):
//   required_disclosures: phrases the agent must say (e.g. "this call is recorded")
//   forbidden_phrases:    phrases the agent must not say (e.g. "guaranteed returns")
//   detect_card_numbers:  flag payment card numbers spoken aloud by anyone (default true)
// Phrases match case-insensitively on word boundaries, in the turn's own words and in its stored
// translation. Card numbers: digits spoken as words (English and Spanish) or written as digits,
// runs of 13–19 that pass the Luhn check.
import { words, type AnalysisTurn } from './transcript.js';

export interface ComplianceRules {
  required_disclosures?: string[];
  forbidden_phrases?: string[];
  detect_card_numbers?: boolean;
}

export interface ComplianceFlag {
  type: 'missing_disclosure' | 'forbidden_phrase' | 'card_number_spoken';
  description: string;
  speaker: 'agent' | 'customer' | null;
  sequence: number | null;
}

export interface ComplianceResult {
  status: 'passed' | 'failed';
  flags: ComplianceFlag[];
}

const DIGIT_WORDS: Record<string, string> = {
  zero: '0',
  oh: '0',
  o: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
  cero: '0',
  uno: '1',
  un: '1',
  dos: '2',
  tres: '3',
  cuatro: '4',
  cinco: '5',
  seis: '6',
  siete: '7',
  ocho: '8',
  nueve: '9',
};

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Runs of consecutive spoken or written digits in `text` (a word that is not a digit ends a run). */
export function digitRuns(text: string): string[] {
  const runs: string[] = [];
  let run = '';
  for (const w of words(text)) {
    const d = /^\d+$/.test(w) ? w : DIGIT_WORDS[w];
    if (d !== undefined) {
      run += d;
    } else if (w !== 'and' && w !== 'y') {
      if (run) runs.push(run);
      run = '';
    }
  }
  if (run) runs.push(run);
  return runs;
}

export function spokenCardNumber(text: string): string | null {
  for (const run of digitRuns(text)) if (run.length >= 13 && run.length <= 19 && luhnValid(run)) return run;
  return null;
}

const normalise = (s: string): string => ` ${words(s).join(' ')} `;

function says(t: AnalysisTurn, phrase: string): boolean {
  const p = normalise(phrase);
  return p.trim() !== '' && (normalise(t.text).includes(p) || (!!t.translation && normalise(t.translation.text).includes(p)));
}

export function checkCompliance(turns: AnalysisTurn[], rules: ComplianceRules): ComplianceResult {
  const flags: ComplianceFlag[] = [];
  const agentTurns = turns.filter((t) => t.speaker === 'agent');
  for (const phrase of rules.required_disclosures ?? []) {
    if (!agentTurns.some((t) => says(t, phrase))) {
      flags.push({ type: 'missing_disclosure', description: `The agent never said the required disclosure "${phrase}".`, speaker: 'agent', sequence: null });
    }
  }
  for (const phrase of rules.forbidden_phrases ?? []) {
    for (const t of agentTurns) {
      if (says(t, phrase))
        flags.push({ type: 'forbidden_phrase', description: `The agent said the forbidden phrase "${phrase}".`, speaker: 'agent', sequence: t.sequence });
    }
  }
  if (rules.detect_card_numbers !== false) {
    for (const t of turns) {
      const card = spokenCardNumber(t.text) ?? (t.translation ? spokenCardNumber(t.translation.text) : null);
      if (card) {
        flags.push({
          type: 'card_number_spoken',
          description: `A payment card number ending in ${card.slice(-4)} was spoken aloud by the ${t.speaker}.`,
          speaker: t.speaker,
          sequence: t.sequence,
        });
      }
    }
  }
  return { status: flags.length ? 'failed' : 'passed', flags };
}
