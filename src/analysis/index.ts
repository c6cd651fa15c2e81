// Public door of analysis/: the embedded post-call analyser.
export { analyseTranscript, ANALYSIS_PARTS, PROFILES, PROFILE_NAMES, type AnalysisPart, type AnalysisResults } from './analyse.js';
export { checkCompliance, luhnValid, spokenCardNumber, digitRuns, type ComplianceRules, type ComplianceFlag } from './compliance.js';
export { partySentiment, turnSentiment, labelOf } from './sentiment.js';
export { keywords, extractiveSummary, actionItems } from './content.js';
export { englishText, type AnalysisTurn } from './transcript.js';
export { llmSummary, transcriptForSummary, LlmSummaryError, type LlmSummaryOptions } from './llm-summary.js';
