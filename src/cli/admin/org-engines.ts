// `voxbridge admin org update ORG --stt … --translate … --tts …`: an organization's own speech
// engines. Checked before anything is written: a known provider, the settings it reads
// (a url where it has no public default), and a named API-key secret that exists (the
// organization's own or a node-wide one). `default` puts a stage back on the node's engine.
import type { Command } from 'commander';
import { listSecrets } from '../../secrets/index.js';
import { checkOrgEngineStage, ORG_ENGINE_PROVIDERS, type EngineStage } from '../../speech/index.js';
import type { Db, OrgEngineChanges, OrgEngineStage } from '../../store/index.js';
import { CliUsageError, parseList } from '../context.js';

interface EngineFlags {
  stt?: string;
  sttUrl?: string;
  sttModel?: string;
  sttSecret?: string;
  sttLanguages?: string;
  translate?: string;
  translateUrl?: string;
  tts?: string;
  ttsUrl?: string;
  ttsModel?: string;
  ttsVoice?: string;
  ttsSecret?: string;
  ttsLanguages?: string;
}

export function addEngineOptions(cmd: Command): Command {
  const list = (s: EngineStage): string => `${ORG_ENGINE_PROVIDERS[s].join(' | ')} | default (the node's)`;
  return cmd
    .option('--stt <provider>', `speech-to-text: ${list('stt')}`)
    .option('--stt-url <url>', 'the STT endpoint (vosk, openai, deepgram)')
    .option('--stt-model <model>', 'the STT model (openai, deepgram)')
    .option('--stt-secret <name>', 'secret holding the STT API key (`admin secret set`)')
    .option('--stt-languages <list>', 'languages the STT engine offers (ISO 639-1, comma list)')
    .option('--translate <provider>', `translation: ${list('translate')}`)
    .option('--translate-url <url>', 'the translation endpoint (libretranslate)')
    .option('--tts <provider>', `speech synthesis: ${list('tts')}`)
    .option('--tts-url <url>', 'the TTS endpoint (openai; elevenlabs defaults to its public API)')
    .option('--tts-model <model>', 'the TTS model (openai, elevenlabs)')
    .option('--tts-voice <voice>', 'the default voice (openai, elevenlabs)')
    .option('--tts-secret <name>', 'secret holding the TTS API key (`admin secret set`)')
    .option('--tts-languages <list>', 'languages the TTS engine offers (ISO 639-1, comma list)');
}

function stageFlags(o: EngineFlags, stage: EngineStage): { provider?: string; settings: Omit<OrgEngineStage, 'provider'> } {
  if (stage === 'translate') return { provider: o.translate, settings: { url: o.translateUrl } };
  const p =
    stage === 'stt'
      ? { provider: o.stt, url: o.sttUrl, model: o.sttModel, secret: o.sttSecret, languages: o.sttLanguages, voice: undefined }
      : { provider: o.tts, url: o.ttsUrl, model: o.ttsModel, secret: o.ttsSecret, languages: o.ttsLanguages, voice: o.ttsVoice };
  return {
    provider: p.provider,
    settings: { url: p.url, model: p.model, voice: p.voice, apiKeySecret: p.secret, languages: p.languages === undefined ? undefined : parseList(p.languages) },
  };
}

/** The engine changes the flags ask for (undefined: none), checked; throws CliUsageError on any problem. */
export async function engineChanges(db: Db, orgId: string, o: EngineFlags): Promise<OrgEngineChanges | undefined> {
  const changes: OrgEngineChanges = {};
  const problems: string[] = [];
  for (const stage of Object.keys(ORG_ENGINE_PROVIDERS) as EngineStage[]) {
    const { provider, settings } = stageFlags(o, stage);
    const given = Object.entries(settings).filter(([, v]) => v !== undefined);
    if (provider === undefined) {
      if (given.length) problems.push(`--${stage}-* options need --${stage} <provider>`);
      continue;
    }
    if (provider === 'default') {
      if (given.length) problems.push(`--${stage} default takes no other --${stage}-* option`);
      changes[stage] = null;
      continue;
    }
    const choice = { provider, ...Object.fromEntries(given) } as OrgEngineStage;
    problems.push(...checkOrgEngineStage(stage, choice).map((p) => `--${stage}: ${p}`));
    if (choice.apiKeySecret && !(await secretExists(db, orgId, choice.apiKeySecret))) {
      problems.push(
        `--${stage}-secret: no secret '${choice.apiKeySecret}' for organization ${orgId} or node-wide (set it with \`voxbridge admin secret set\`)`,
      );
    }
    changes[stage] = choice;
  }
  if (problems.length) throw new CliUsageError(problems.join('\n'));
  return Object.keys(changes).length ? changes : undefined;
}

async function secretExists(db: Db, orgId: string, name: string): Promise<boolean> {
  const [own, node] = await Promise.all([listSecrets(db, orgId), listSecrets(db, null)]);
  return [...own, ...node].some((s) => s.name === name);
}
