// Per-organization engines: an organization may choose its own provider per stage
// (`voxbridge admin org update ORG --stt … --translate … --tts …`, stored by store/org-engines-repo).
// forOrg() answers with the node's engines for organizations that chose none, and otherwise builds
// the organization's engines once and caches them (remote adapters open no connection until a
// stream or call needs one, so planning a session costs one indexed read). A changed choice builds
// new engines; the replaced ones are closed when the node stops, as live sessions may still use them.
import type { Config } from '../config/index.js';
import type { OrgEngineChoice, OrgEngineStage } from '../store/index.js';
import { EMBEDDED_PROVIDERS, type EmbeddedEngines } from './embedded.js';
import { buildEngines, createRemoteStt, createRemoteTranslator, createRemoteTts } from './factory.js';
import { FallbackStt, FallbackTranslator, FallbackTts } from './fallback.js';
import type { Engines, SttEngine, Translator, TtsEngine } from './types.js';

/** Providers an organization may choose per stage (the engines.* providers without `none`). */
export const ORG_ENGINE_PROVIDERS = {
  stt: ['pocketsphinx', 'vosk', 'openai', 'deepgram'],
  translate: ['apertium', 'libretranslate'],
  tts: ['espeak-ng', 'openai', 'elevenlabs'],
} as const;

export type EngineStage = keyof typeof ORG_ENGINE_PROVIDERS;

/** Remote providers that have no public default address. */
const NEEDS_URL = new Set(['stt:vosk', 'stt:openai', 'stt:deepgram', 'translate:libretranslate', 'tts:openai']);
/** Settings each stage's remote providers read (the embedded ones read none). */
const STAGE_SETTINGS: Record<EngineStage, ReadonlyArray<keyof OrgEngineStage>> = {
  stt: ['url', 'model', 'apiKeySecret', 'languages'],
  translate: ['url'],
  tts: ['url', 'model', 'voice', 'apiKeySecret', 'languages'],
};

/** What is wrong with a stage choice, one sentence each (empty: valid). Secrets are checked by the caller. */
export function checkOrgEngineStage(stage: EngineStage, s: OrgEngineStage): string[] {
  const allowed: readonly string[] = ORG_ENGINE_PROVIDERS[stage];
  if (!allowed.includes(s.provider)) return [`unknown ${stage} provider '${s.provider}'; use one of: ${allowed.join(', ')}`];
  const problems: string[] = [];
  const embedded = s.provider === EMBEDDED_PROVIDERS[stage];
  const given = (Object.keys(s) as Array<keyof OrgEngineStage>).filter((k) => k !== 'provider' && s[k] !== undefined);
  for (const k of given) {
    if (embedded || !STAGE_SETTINGS[stage].includes(k)) problems.push(`${s.provider} (${stage}) takes no ${k}`);
  }
  if (NEEDS_URL.has(`${stage}:${s.provider}`) && !s.url) problems.push(`${s.provider} (${stage}) needs a url`);
  if (s.url !== undefined && !/^(https?|wss?):\/\/[^/]/.test(s.url)) problems.push(`${stage} url '${s.url}' is not an http(s):// or ws(s):// address`);
  for (const l of s.languages ?? []) if (!/^[a-z]{2}$/.test(l)) problems.push(`${stage} language '${l}' is not an ISO 639-1 code`);
  return problems;
}

/** The node's engines configuration with an organization's stage choice merged in. */
function stageConfig(node: Config['engines'], choice: OrgEngineChoice): Config['engines'] {
  const cfg = structuredClone(node);
  if (choice.stt) {
    const s = choice.stt;
    cfg.stt = {
      ...cfg.stt,
      provider: s.provider as Config['engines']['stt']['provider'],
      url: s.url,
      model: s.model ?? cfg.stt.model,
      apiKey: undefined,
      apiKeySecret: s.apiKeySecret,
      languages: s.languages,
    };
  }
  if (choice.translate)
    cfg.translate = { ...cfg.translate, provider: choice.translate.provider as Config['engines']['translate']['provider'], url: choice.translate.url };
  if (choice.tts) {
    const s = choice.tts;
    cfg.tts = {
      ...cfg.tts,
      provider: s.provider as Config['engines']['tts']['provider'],
      url: s.url,
      model: s.model ?? cfg.tts.model,
      voice: s.voice ?? cfg.tts.voice,
      apiKey: undefined,
      apiKeySecret: s.apiKeySecret,
      languages: s.languages,
    };
  }
  return cfg;
}

export interface EngineDirectoryOptions {
  /** The node's engines configuration (timeouts, retries, fallback, defaults). */
  config: Config['engines'];
  /** The node's engines: organizations without a choice, and every stage an organization left unset. */
  node: Engines;
  embedded: EmbeddedEngines;
  /** Reads an organization's choice (store/getOrgEngines); null when it has none. */
  load: (orgId: string) => Promise<OrgEngineChoice | null>;
  /** An organization's secret by name, else the node-wide one of that name. */
  resolveSecret?: (orgId: string, name: string) => Promise<string | null>;
  onListenerError?: (err: unknown) => void;
}

interface Cached {
  key: string;
  engines: Promise<Engines>;
}

export class EngineDirectory {
  private readonly cache = new Map<string, Cached>();
  private readonly retired: Array<Promise<Engines>> = [];
  private closed = false;

  constructor(private readonly opts: EngineDirectoryOptions) {}

  /** The engines sessions of `orgId` use. */
  async forOrg(orgId: string): Promise<Engines> {
    const choice = await this.opts.load(orgId);
    if (!choice) return this.opts.node;
    const key = JSON.stringify(choice);
    const hit = this.cache.get(orgId);
    if (hit?.key === key) return hit.engines;
    if (this.closed) throw new Error('the engine directory is closed');
    if (hit) this.retired.push(hit.engines);
    const engines = this.build(orgId, choice);
    this.cache.set(orgId, { key, engines });
    // A failed build is not cached: the next session tries again (and reports the same error).
    engines.catch(() => this.cache.get(orgId)?.engines === engines && this.cache.delete(orgId));
    return engines;
  }

  private async build(orgId: string, choice: OrgEngineChoice): Promise<Engines> {
    const { node, embedded } = this.opts;
    const cfg = stageConfig(this.opts.config, choice);
    const resolve = this.opts.resolveSecret;
    const factoryOpts = { onListenerError: this.opts.onListenerError, resolveSecret: resolve && ((name: string) => resolve(orgId, name)) };
    const fallback = cfg.fallback === 'embedded';
    const owned: Array<{ close(): Promise<void> }> = [];
    const own = <T extends { close(): Promise<void> }>(e: T | null): T | null => (e && owned.push(e), e);
    try {
      const stt: SttEngine | null = !choice.stt
        ? node.stt
        : choice.stt.provider === EMBEDDED_PROVIDERS.stt
          ? await embedded.stt()
          : wrap(own(createRemoteStt(cfg, factoryOpts)), (e) => (fallback ? new FallbackStt(e, embedded) : e));
      const translator: Translator | null = !choice.translate
        ? node.translator
        : choice.translate.provider === EMBEDDED_PROVIDERS.translate
          ? await embedded.translator()
          : wrap(own(await createRemoteTranslator(cfg)), (e) => (fallback ? new FallbackTranslator(e, embedded) : e));
      const tts: TtsEngine | null = !choice.tts
        ? node.tts
        : choice.tts.provider === EMBEDDED_PROVIDERS.tts
          ? await embedded.tts()
          : wrap(own(createRemoteTts(cfg, factoryOpts)), (e) => (fallback ? new FallbackTts(e, embedded) : e));
      return buildEngines(stt, translator, tts, owned);
    } catch (err) {
      await Promise.allSettled(owned.map((e) => e.close()));
      throw err;
    }
  }

  /** Closes every organization's own engines (not the node's, not the embedded ones). */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...[...this.cache.values()].map((c) => c.engines), ...this.retired];
    this.cache.clear();
    await Promise.allSettled(all.map(async (p) => (await p).close()));
  }
}

function wrap<T, U>(e: T | null, f: (e: T) => U): U | null {
  return e === null ? null : f(e);
}
