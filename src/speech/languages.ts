// ISO 639-1 <-> ISO 639-3 codes for the languages the embedded engines (Apertium, espeak-ng)
// name with three letters. The API speaks ISO 639-1 (SPEC: `language` fields).
const ISO1_TO_3: Record<string, string> = {
  af: 'afr',
  an: 'arg',
  ar: 'ara',
  be: 'bel',
  bg: 'bul',
  br: 'bre',
  ca: 'cat',
  cs: 'ces',
  cy: 'cym',
  da: 'dan',
  de: 'deu',
  el: 'ell',
  en: 'eng',
  eo: 'epo',
  es: 'spa',
  et: 'est',
  eu: 'eus',
  fa: 'fas',
  fi: 'fin',
  fr: 'fra',
  ga: 'gle',
  gl: 'glg',
  he: 'heb',
  hi: 'hin',
  hr: 'hrv',
  hu: 'hun',
  id: 'ind',
  is: 'isl',
  it: 'ita',
  ja: 'jpn',
  kk: 'kaz',
  ko: 'kor',
  lt: 'lit',
  lv: 'lav',
  mk: 'mkd',
  ms: 'msa',
  mt: 'mlt',
  nb: 'nob',
  nl: 'nld',
  nn: 'nno',
  no: 'nor',
  oc: 'oci',
  pl: 'pol',
  pt: 'por',
  ro: 'ron',
  ru: 'rus',
  sc: 'srd',
  se: 'sme',
  sk: 'slk',
  sl: 'slv',
  sq: 'sqi',
  sr: 'srp',
  sv: 'swe',
  sw: 'swa',
  tr: 'tur',
  tt: 'tat',
  uk: 'ukr',
  ur: 'urd',
  vi: 'vie',
  zh: 'zho',
};
const ISO3_TO_1: Record<string, string> = Object.fromEntries(Object.entries(ISO1_TO_3).map(([a, b]) => [b, a]));
// Older Apertium pairs use bibliographic or legacy codes.
Object.assign(ISO3_TO_1, { cat: 'ca', fre: 'fr', ger: 'de', dut: 'nl', baq: 'eu', rum: 'ro', per: 'fa', alb: 'sq' });

/** ISO 639-1 code for a 2- or 3-letter code, or null when unknown. */
export function toIso1(code: string): string | null {
  const c = code.toLowerCase();
  if (c.length === 2) return ISO1_TO_3[c] ? c : null;
  return ISO3_TO_1[c] ?? null;
}

export function toIso3(iso1: string): string | null {
  return ISO1_TO_3[iso1.toLowerCase()] ?? null;
}

/** "en:es" (how translators key their pairs) -> { from: 'en', to: 'es' }. */
export function splitPair(key: string): { from: string; to: string } {
  const i = key.indexOf(':');
  return { from: key.slice(0, i), to: key.slice(i + 1) };
}
