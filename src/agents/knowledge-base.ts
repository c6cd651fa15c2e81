// Ranked retrieval over an agent's knowledge_base articles (minisearch: BM25 with prefix and fuzzy
// terms, which forgives recognizer slips). Articles are cut into passages (paragraphs, or groups
// of sentences) so the spoken answer is the best passage, not a whole article.
import MiniSearch from 'minisearch';
import type { AgentArticle } from './types.js';
import { FUNCTION_WORDS, normalize, splitSentences } from './text.js';

export interface Passage {
  id: number;
  title: string;
  text: string;
}

export interface KbHit {
  passage: Passage;
  score: number;
}

const STOP = new Set([...FUNCTION_WORDS, 'how', 'do', 'does', 'can', 'what', 'please', 'with', 'want', 'would', 'like', 'about', 'tell']);

/** Two hits closer than this share of the best score are a tie: the agent asks which one. */
export const TIE_RATIO = 0.85;

export class KnowledgeBase {
  private readonly index = new MiniSearch<Passage>({
    fields: ['title', 'text'],
    storeFields: ['title', 'text'],
    processTerm: (t) => {
      const n = normalize(t);
      return n && !STOP.has(n) ? n : null;
    },
    searchOptions: { boost: { title: 2 }, prefix: true, fuzzy: 0.2 },
  });
  private readonly passages: Passage[] = [];

  constructor(articles: readonly AgentArticle[]) {
    for (const a of articles) {
      for (const text of passagesOf(a.content)) this.passages.push({ id: this.passages.length, title: a.title, text });
    }
    this.index.addAll(this.passages);
  }

  get size(): number {
    return this.passages.length;
  }

  /** Best passage per article, best article first. */
  search(query: string, limit = 3): KbHit[] {
    const seen = new Set<string>();
    const hits: KbHit[] = [];
    for (const r of this.index.search(query)) {
      const p = this.passages[r.id as number];
      if (!p || seen.has(p.title)) continue; // ids are passage indexes; a miss would be an index bug
      seen.add(p.title);
      hits.push({ passage: p, score: r.score });
      if (hits.length >= limit) break;
    }
    return hits;
  }
}

function passagesOf(content: string): string[] {
  const paragraphs = content
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  const out: string[] = [];
  for (const p of paragraphs) {
    const sentences = splitSentences(p.replace(/\s+/g, ' '));
    for (let i = 0; i < sentences.length; i += 3) out.push(sentences.slice(i, i + 3).join(' '));
  }
  return out;
}

/** A short spoken answer from a passage: its first two sentences. */
export function shortAnswer(p: Passage): string {
  return splitSentences(p.text).slice(0, 2).join(' ');
}
