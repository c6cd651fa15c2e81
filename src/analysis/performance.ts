// The agent's performance score (0–100) from four measurable features of the stored transcript
// (README "Analysis" explains them):
//   talk ratio     agent speaking time / all speaking time; 0.35–0.60 scores 1, falling to 0 at 0 and 1
//   response time  mean gap from a customer turn's end to the agent's next turn start; ≤1 s → 1, ≥6 s → 0
//   interruptions  agent turns starting > 0.3 s before the customer's turn ended, per agent turn
//   sentiment trend the customer's mean sentiment in the second half of their turns minus the first
// Each is scored 0..1 and weighted by the profile; features the transcript cannot give (turns
// stored without timing) drop out and the remaining weights are renormalised.
import type { AnalysisTurn } from './transcript.js';

export interface PerformanceWeights {
  talkRatio: number;
  responseLatency: number;
  interruptions: number;
  sentimentTrend: number;
}

export interface PerformanceResult {
  score: number;
  talk_ratio: number | null;
  mean_response_latency_seconds: number | null;
  interruptions: number | null;
  sentiment_trend: number | null;
}

const clamp01 = (x: number): number => Math.max(0, Math.min(1, x));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function talkRatioScore(r: number): number {
  if (r >= 0.35 && r <= 0.6) return 1;
  return r < 0.35 ? r / 0.35 : (1 - r) / 0.4;
}

export function performance(turns: AnalysisTurn[], customerTurnScores: number[], w: PerformanceWeights): PerformanceResult {
  const timed = turns.filter((t) => t.startTime !== null && t.endTime !== null && t.endTime >= t.startTime);
  const parts: Array<[number, number]> = [];
  let talkRatio: number | null = null;
  let latency: number | null = null;
  let interruptions: number | null = null;
  let trend: number | null = null;

  const talk = { agent: 0, customer: 0 };
  for (const t of timed) talk[t.speaker] += t.endTime! - t.startTime!;
  if (talk.agent + talk.customer > 0) {
    talkRatio = talk.agent / (talk.agent + talk.customer);
    parts.push([talkRatioScore(talkRatio), w.talkRatio]);
  }

  const gaps: number[] = [];
  let interrupted = 0;
  let agentTurns = 0;
  for (let i = 1; i < timed.length; i++) {
    const prev = timed[i - 1];
    const cur = timed[i];
    if (!prev || !cur) continue; // i in [1, length): both exist
    if (cur.speaker !== 'agent') continue;
    agentTurns++;
    if (prev.speaker !== 'customer') continue;
    const gap = cur.startTime! - prev.endTime!;
    if (gap < -0.3) interrupted++;
    else gaps.push(Math.max(0, gap));
  }
  if (gaps.length) {
    latency = Math.round(mean(gaps) * 100) / 100;
    parts.push([clamp01(1 - (latency - 1) / 5), w.responseLatency]);
  }
  if (agentTurns > 0) {
    interruptions = interrupted;
    parts.push([clamp01(1 - (2 * interrupted) / agentTurns), w.interruptions]);
  }
  if (customerTurnScores.length >= 2) {
    const half = Math.floor(customerTurnScores.length / 2);
    trend = Math.round((mean(customerTurnScores.slice(half)) - mean(customerTurnScores.slice(0, half))) * 1000) / 1000;
    parts.push([clamp01(0.5 + trend * 2), w.sentimentTrend]);
  }
  const totalWeight = parts.reduce((a, [, wt]) => a + wt, 0);
  const score = totalWeight > 0 ? Math.round((100 * parts.reduce((a, [s, wt]) => a + s * wt, 0)) / totalWeight) : 50;
  return {
    score,
    talk_ratio: talkRatio === null ? null : Math.round(talkRatio * 1000) / 1000,
    mean_response_latency_seconds: latency,
    interruptions,
    sentiment_trend: trend,
  };
}
