// Slot values pulled out of an utterance for reply templates ({order_id}, {number}, {date}, {time})
// and tool arguments. Works on recognizer output, so spoken numbers are read as digits first.
import { wordsToDigits } from './text.js';

export type Slots = Record<string, string>;

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  eleventh: 11,
  twelfth: 12,
  thirteenth: 13,
  fourteenth: 14,
  fifteenth: 15,
  sixteenth: 16,
  seventeenth: 17,
  eighteenth: 18,
  nineteenth: 19,
  twentieth: 20,
  thirtieth: 30,
};

export function extractSlots(utterance: string, now = new Date()): Slots {
  const text = wordsToDigits(utterance);
  const slots: Slots = {};
  // An order / reference id: a run of 3+ digits, or letters+digits, preferably after "order", "number", "id".
  const orderId = (/\b(?:order|reference|ticket|case|number|id)\s+(?:number\s+|id\s+|is\s+)?([a-z]{0,3}\d{3,})\b/.exec(text) ??
    /\b([a-z]{0,3}\d{3,})\b/.exec(text))?.[1];
  if (orderId) slots.order_id = orderId.toUpperCase();
  const number = /\b(\d+)\b/.exec(text)?.[1];
  if (number) slots.number = number;
  const time = /\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a m|p m|oclock)\b/.exec(text) ?? /\b(\d{1,2}):(\d{2})\b/.exec(text);
  if (time) {
    let h = Number(time[1]);
    const m = time[2] ? Number(time[2]) : 0;
    const mer = (time[3] ?? '').replace(' ', '');
    if (mer === 'pm' && h < 12) h += 12;
    if (mer === 'am' && h === 12) h = 0;
    if (h < 24 && m < 60) slots.time = `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
  }
  const date = extractDate(text, utterance.toLowerCase(), now);
  if (date) slots.date = date;
  return slots;
}

function iso(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function extractDate(text: string, raw: string, now: Date): string | null {
  const day = (offset: number) => iso(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + offset)));
  if (/\btoday\b/.test(text)) return day(0);
  if (/\btomorrow\b/.test(text)) return day(1);
  if (/\byesterday\b/.test(text)) return day(-1);
  const isoDate = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(text);
  if (isoDate) return isoDate[0];
  const monthRe = new RegExp(`\\b(${MONTHS.join('|')})\\s+(?:the\\s+)?(\\d{1,2}|${Object.keys(ORDINALS).join('|')})(?:st|nd|rd|th)?\\b`);
  const [, monthName, dayWord] = monthRe.exec(text) ?? monthRe.exec(raw) ?? [];
  if (monthName && dayWord) {
    const month = MONTHS.indexOf(monthName);
    const dayOfMonth = /^\d+$/.test(dayWord) ? Number(dayWord) : (ORDINALS[dayWord] ?? 0);
    if (dayOfMonth >= 1 && dayOfMonth <= 31) {
      let d = new Date(Date.UTC(now.getUTCFullYear(), month, dayOfMonth));
      if (d.getTime() < now.getTime() - 86_400_000) d = new Date(Date.UTC(now.getUTCFullYear() + 1, month, dayOfMonth));
      return iso(d);
    }
  }
  const weekday = new RegExp(`\\b(?:on|next|this)?\\s*(${WEEKDAYS.join('|')})\\b`).exec(text)?.[1];
  if (weekday) {
    const target = (WEEKDAYS.indexOf(weekday) + 1) % 7; // JS: Sunday = 0
    let diff = (target - now.getUTCDay() + 7) % 7;
    if (diff === 0) diff = 7;
    return day(diff);
  }
  return null;
}

/** Fills `{slot}` placeholders; a placeholder without a value is read as "that". */
export function fillTemplate(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{([a-z0-9_.]+)\}/gi, (_, key: string) => {
    const v = key.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), values);
    if (v === undefined || v === null) return 'that';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return v.toString();
    return JSON.stringify(v) ?? 'that';
  });
}
