// Text normalization for matching what a recognizer heard: lower case, no punctuation, spoken
// numbers turned into digits ("order one two three" → "order 123", "twenty five" → "25").

const UNITS: Record<string, number> = {
  zero: 0,
  oh: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };

/** Words that carry no meaning for matching; the intent matcher and the knowledge base each add their own. */
export const FUNCTION_WORDS = ['a', 'an', 'the', 'i', 'me', 'my', 'you', 'your', 'to', 'is', 'are', 'it', 'of', 'and', 'or', 'for', 'in', 'on'] as const;

export function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[^\p{L}\p{N}\s:/-]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Replaces runs of spoken number words by digits. A run of single digits is read digit by digit
 * (an order or phone number); "twenty five" / "one hundred" are read as one value.
 */
export function wordsToDigits(text: string): string {
  const words = normalize(text).split(' ');
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length) out.push(readNumberRun(run));
    run = [];
  };
  for (const w of words) {
    if (unitOf(w) !== undefined || tensOf(w) !== undefined || w === 'hundred' || w === 'thousand') run.push(w);
    else {
      flush();
      out.push(w);
    }
  }
  flush();
  return out
    .join(' ')
    .replace(/(\d) (?=\d)/g, '$1')
    .trim();
}

// Own keys only: a word like "constructor" must not read as a number through the prototype.
const unitOf = (w: string): number | undefined => (Object.hasOwn(UNITS, w) ? UNITS[w] : undefined);
const tensOf = (w: string): number | undefined => (Object.hasOwn(TENS, w) ? TENS[w] : undefined);

function readNumberRun(run: string[]): string {
  // Digit by digit when every word is a single digit ("one two three" → 123).
  const digits = run.map(unitOf);
  if (digits.every((d) => d !== undefined && d < 10)) return digits.join('');
  let total = 0;
  let current = 0;
  const groups: string[] = [];
  for (const w of run) {
    const unit = unitOf(w);
    const tens = tensOf(w);
    if (unit !== undefined) {
      if (current % 10 !== 0 || (current >= 10 && current < 20)) {
        groups.push(String(total + current));
        total = 0;
        current = 0;
      }
      current += unit;
    } else if (tens !== undefined) {
      if (current !== 0 && current % 100 !== 0) {
        groups.push(String(total + current));
        total = 0;
        current = 0;
      }
      current += tens;
    } else if (w === 'hundred') current = (current || 1) * 100;
    else if (w === 'thousand') {
      total += (current || 1) * 1000;
      current = 0;
    }
  }
  groups.push(String(total + current));
  return groups.join('');
}

/** Splits text into sentences so speech can start at the first one. */
export function splitSentences(text: string): string[] {
  const parts = text.match(/[^.!?]+[.!?]+["')\]]*|[^.!?]+$/g) ?? [];
  return parts.map((s) => s.trim()).filter((s) => s.length > 0);
}
