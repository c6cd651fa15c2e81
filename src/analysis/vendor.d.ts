// Types for the two lexicon packages the analyser uses (neither ships its own).
declare module 'sentiment' {
  interface AnalysisResult {
    score: number;
    comparative: number;
    tokens: string[];
    positive: string[];
    negative: string[];
  }
  export default class Sentiment {
    analyze(text: string): AnalysisResult;
  }
}
declare module 'stopword' {
  export const eng: string[];
  export const spa: string[];
  export function removeStopwords(tokens: string[], stopwords?: string[]): string[];
}
