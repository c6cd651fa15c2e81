// Whisper's language names (openai/whisper tokenizer.py LANGUAGES). OpenAI's `verbose_json`
// answers `"language": "english"`; self-hosted servers (faster-whisper-server, whisper.cpp)
// answer either the name or the ISO 639-1 code. The API speaks ISO 639-1.
const WHISPER_NAMES: Record<string, string> = {
  en: 'english',
  zh: 'chinese',
  de: 'german',
  es: 'spanish',
  ru: 'russian',
  ko: 'korean',
  fr: 'french',
  ja: 'japanese',
  pt: 'portuguese',
  tr: 'turkish',
  pl: 'polish',
  ca: 'catalan',
  nl: 'dutch',
  ar: 'arabic',
  sv: 'swedish',
  it: 'italian',
  id: 'indonesian',
  hi: 'hindi',
  fi: 'finnish',
  vi: 'vietnamese',
  he: 'hebrew',
  uk: 'ukrainian',
  el: 'greek',
  ms: 'malay',
  cs: 'czech',
  ro: 'romanian',
  da: 'danish',
  hu: 'hungarian',
  ta: 'tamil',
  no: 'norwegian',
  th: 'thai',
  ur: 'urdu',
  hr: 'croatian',
  bg: 'bulgarian',
  lt: 'lithuanian',
  la: 'latin',
  cy: 'welsh',
  sk: 'slovak',
  te: 'telugu',
  fa: 'persian',
  lv: 'latvian',
  bn: 'bengali',
  sr: 'serbian',
  az: 'azerbaijani',
  sl: 'slovenian',
  et: 'estonian',
  mk: 'macedonian',
  eu: 'basque',
  is: 'icelandic',
  hy: 'armenian',
  ne: 'nepali',
  bs: 'bosnian',
  kk: 'kazakh',
  sq: 'albanian',
  sw: 'swahili',
  gl: 'galician',
  mr: 'marathi',
  pa: 'punjabi',
  af: 'afrikaans',
  be: 'belarusian',
  ka: 'georgian',
  tl: 'tagalog',
};
const BY_NAME: Record<string, string> = Object.fromEntries(Object.entries(WHISPER_NAMES).map(([c, n]) => [n, c]));

/** The ISO 639-1 codes Whisper-class engines transcribe (and OpenAI-compatible TTS speaks). */
export const WHISPER_LANGUAGES: string[] = Object.keys(WHISPER_NAMES).sort();

/** ISO 639-1 code for a Whisper language name or code ("english", "en", "EN"), or null. */
export function whisperLanguageToIso1(value: string | undefined | null): string | null {
  if (!value) return null;
  const v = value.trim().toLowerCase();
  if (WHISPER_NAMES[v]) return v;
  return BY_NAME[v] ?? null;
}
