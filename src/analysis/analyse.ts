// The embedded post-call analyser: lexicon sentiment, keywords, an extractive summary, action
// items, the organization's compliance rules and a performance score, on the stored transcript.
// `include` chooses the parts; the profile chooses the performance weights (and how strict
// compliance is). Deterministic: the same transcript gives the same results.
import { actionItems, extractiveSummary, keywords, type ActionItem } from './content.js';
import { checkCompliance, type ComplianceResult, type ComplianceRules } from './compliance.js';
import { performance, type PerformanceResult, type PerformanceWeights } from './performance.js';
import { labelOf, partySentiment, type SentimentLabel } from './sentiment.js';
import type { AnalysisTurn } from './transcript.js';

export const ANALYSIS_PARTS = ['summary', 'sentiment', 'compliance', 'keywords', 'performance'] as const;
export type AnalysisPart = (typeof ANALYSIS_PARTS)[number];

interface Profile {
  weights: PerformanceWeights;
  /** A compliance failure caps the performance score at this value. */
  complianceCap: number;
}

/** Analysis profiles (README "Analysis"). */
const DEFAULT_PROFILE: Profile = { weights: { talkRatio: 0.25, responseLatency: 0.25, interruptions: 0.2, sentimentTrend: 0.3 }, complianceCap: 100 };
export const PROFILES: Record<string, Profile> = {
  default: DEFAULT_PROFILE,
  support: { weights: { talkRatio: 0.15, responseLatency: 0.3, interruptions: 0.2, sentimentTrend: 0.35 }, complianceCap: 100 },
  sales: { weights: { talkRatio: 0.35, responseLatency: 0.2, interruptions: 0.25, sentimentTrend: 0.2 }, complianceCap: 100 },
  compliance: { weights: { talkRatio: 0.25, responseLatency: 0.25, interruptions: 0.2, sentimentTrend: 0.3 }, complianceCap: 50 },
};
export const PROFILE_NAMES = Object.keys(PROFILES);

export interface AnalysisResults {
  summary: string | null;
  sentiment: { customer: SentimentLabel; agent: SentimentLabel; customer_score: number; agent_score: number; overall: number; label: SentimentLabel } | null;
  compliance: ComplianceResult | null;
  keywords: string[] | null;
  performance: PerformanceResult | null;
  action_items: ActionItem[];
}

export function analyseTranscript(turns: AnalysisTurn[], opts: { include: readonly AnalysisPart[]; profile: string; rules: ComplianceRules }): AnalysisResults {
  const profile = PROFILES[opts.profile] ?? DEFAULT_PROFILE;
  const want = new Set(opts.include);
  const customer = partySentiment(turns, 'customer');
  const agent = partySentiment(turns, 'agent');
  const all = [...customer.turnScores, ...agent.turnScores];
  const overall = all.length ? Math.round(Math.tanh(all.reduce((a, b) => a + b, 0) / all.length) * 1000) / 1000 : 0;
  // Compliance runs whenever performance is asked too under a profile that caps on it.
  const compliance = want.has('compliance') || profile.complianceCap < 100 ? checkCompliance(turns, opts.rules) : null;
  let perf: PerformanceResult | null = null;
  if (want.has('performance')) {
    perf = performance(turns, customer.turnScores, profile.weights);
    if (compliance?.status === 'failed') perf.score = Math.min(perf.score, profile.complianceCap);
  }
  return {
    summary: want.has('summary') ? extractiveSummary(turns) : null,
    sentiment: want.has('sentiment')
      ? { customer: customer.label, agent: agent.label, customer_score: customer.score, agent_score: agent.score, overall, label: labelOf(overall) }
      : null,
    compliance: want.has('compliance') ? compliance : null,
    keywords: want.has('keywords') ? keywords(turns) : null,
    performance: perf,
    action_items: actionItems(turns),
  };
}
