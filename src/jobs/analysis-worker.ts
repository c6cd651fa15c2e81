// Analysis job: each `processing` analysis is claimed with a lease (a crashed worker's claims are
// resumed), the embedded analyser runs on the stored transcript, and the row becomes `completed`
// with `analysis.completed` or `failed` with `analysis.failed` (SPEC "Analysis (status)").
import type { Logger } from 'pino';
import { analyseTranscript, llmSummary, ANALYSIS_PARTS, type AnalysisPart, type AnalysisTurn } from '../analysis/index.js';
import type { Config } from '../config/index.js';
import {
  analysisTurns,
  claimAnalyses,
  completeAnalysis,
  complianceRules,
  failAnalysis,
  releaseAnalysisLease,
  type AnalysisRow,
  type Db,
} from '../store/index.js';
import { startPeriodicSweep, type Sweeper } from './periodic-sweep.js';

export const MAX_ANALYSIS_ATTEMPTS = 3;

export interface AnalysisWorkerDeps {
  db: Db;
  logger: Logger;
  intervalMs: number;
  leaseSeconds: number;
  /** Who writes the summary (config postCall.summary); extractive when absent. */
  summary?: Config['postCall']['summary'];
}

/** The LLM's summary when one is configured and answers; else the extractive one, and which it was. */
async function chooseSummary(
  extractive: string | null,
  turns: AnalysisTurn[],
  o: AnalysisWorkerDeps['summary'],
  log: Logger | undefined,
): Promise<{ summary: string | null; engine: 'extractive' | 'openai_compatible' }> {
  if (extractive === null || o?.engine !== 'openai_compatible') return { summary: extractive, engine: 'extractive' };
  try {
    return { summary: await llmSummary(turns, o), engine: 'openai_compatible' };
  } catch (err) {
    log?.warn({ err }, 'LLM summary failed; the extractive summary stands');
    return { summary: extractive, engine: 'extractive' };
  }
}

export async function runAnalysis(db: Db, a: AnalysisRow, deps: Pick<AnalysisWorkerDeps, 'summary'> = {}, log?: Logger): Promise<void> {
  const stored = await analysisTurns(db, a.session_id);
  if (stored.length === 0) throw new Error('the transcript has no turns to analyse');
  const turns: AnalysisTurn[] = stored.map((t) => ({
    sequence: t.sequence,
    speaker: t.speaker === 'agent' ? 'agent' : 'customer',
    language: t.language,
    text: t.text,
    translation: t.translation,
    startTime: t.start_time,
    endTime: t.end_time,
  }));
  const include = a.include.filter((p): p is AnalysisPart => (ANALYSIS_PARTS as readonly string[]).includes(p));
  const r = analyseTranscript(turns, { include, profile: a.profile, rules: await complianceRules(db, a.org_id) });
  const { summary, engine } = await chooseSummary(r.summary, turns, deps.summary, log);
  await completeAnalysis(db, a.id, {
    summary,
    sentiment: r.sentiment && { customer: r.sentiment.customer, agent: r.sentiment.agent },
    compliance: r.compliance && { status: r.compliance.status, flags: r.compliance.flags },
    keywords: r.keywords,
    performance: r.performance && { score: r.performance.score },
    details: { sentiment: r.sentiment, performance: r.performance, action_items: r.action_items, summary_engine: engine },
    eventResults: {
      ...(r.sentiment ? { sentiment: { overall: r.sentiment.overall, label: r.sentiment.label } } : {}),
      ...(summary !== null ? { summary: { brief: summary } } : {}),
      action_items: r.action_items,
      ...(r.performance ? { quality: { score: r.performance.score } } : {}),
    },
  });
}

export function startAnalysisWorker(deps: AnalysisWorkerDeps): Sweeper {
  const log = deps.logger.child({ component: 'analysis-worker' });
  return startPeriodicSweep(
    deps.intervalMs,
    async (stopped) => {
      const done: string[] = [];
      while (!stopped()) {
        const batch = await claimAnalyses(deps.db, deps.leaseSeconds, 8);
        if (batch.length === 0) break;
        for (const a of batch) {
          try {
            await runAnalysis(deps.db, a, deps, log.child({ analysis_id: a.id }));
          } catch (err) {
            const message = (err as Error).message;
            if (a.attempts >= MAX_ANALYSIS_ATTEMPTS || /no turns/.test(message)) {
              await failAnalysis(deps.db, a.id, `The analysis could not complete: ${message}`);
            } else {
              log.warn({ err, analysis_id: a.id }, 'analysis failed; will retry');
              await releaseAnalysisLease(deps.db, a.id);
            }
          }
          done.push(a.id);
        }
      }
      return done;
    },
    (err) => log.error({ err }, 'analysis pass failed'),
  );
}
