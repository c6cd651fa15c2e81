import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../src/config/index.js';
import { createEngines } from '../../../src/speech/index.js';

const base = loadConfig({}).engines;
const withEngines = (over: Partial<{ [K in keyof Config['engines']]: Partial<Config['engines'][K]> }>): Config['engines'] => ({
  ...base,
  stt: { ...base.stt, ...over.stt },
  translate: { ...base.translate, ...over.translate },
  tts: { ...base.tts, ...over.tts },
});

describe('createEngines', () => {
  it('starts the embedded engines and answers what they can serve', async () => {
    const engines = await createEngines(withEngines({ stt: { poolSize: 1 } }));
    try {
      expect(engines.stt?.name).toBe('pocketsphinx');
      expect(engines.translator?.name).toBe('apertium');
      expect(engines.tts?.name).toBe('espeak-ng');
      expect(engines.canTranscribe('en')).toBe(true);
      expect(engines.canTranscribe('es')).toBe(false);
      expect(engines.canTranslate('en', 'es')).toBe(true);
      expect(engines.canTranslate('es', 'en')).toBe(true);
      expect(engines.canTranslate('en', 'de')).toBe(false);
      expect(engines.canTranslate('de', 'de')).toBe(true);
      expect(engines.canSpeak('es')).toBe(true);
      expect(engines.canSpeak('xx')).toBe(false);
      const caps = engines.capabilities();
      expect(caps.stt).toEqual({ provider: 'pocketsphinx', languages: ['en'] });
      expect(caps.translate.pairs).toContainEqual({ from: 'en', to: 'es' });
      expect(caps.tts.languages).toContain('en');
    } finally {
      await engines.close();
      await engines.close(); // idempotent
    }
  }, 60_000);

  it("returns null engines for provider 'none'", async () => {
    const engines = await createEngines(withEngines({ stt: { provider: 'none' }, translate: { provider: 'none' }, tts: { provider: 'none' } }));
    expect([engines.stt, engines.translator, engines.tts]).toEqual([null, null, null]);
    expect(engines.canTranscribe('en')).toBe(false);
    expect(engines.canTranslate('en', 'es')).toBe(false);
    expect(engines.canTranslate('en', 'en')).toBe(true); // same language needs no translator
    expect(engines.canSpeak('en')).toBe(false);
    expect(engines.capabilities().stt.provider).toBe('none');
    await engines.close();
  });

  it('fails clearly on an adapter without its url, and on a bad model path', async () => {
    await expect(createEngines(withEngines({ stt: { provider: 'vosk' }, translate: { provider: 'none' }, tts: { provider: 'none' } }))).rejects.toThrow(
      /STT_URL/,
    );
    const bad = { ...withEngines({ stt: { poolSize: 1 }, translate: { provider: 'none' }, tts: { provider: 'none' } }) };
    bad.pocketsphinx = { ...bad.pocketsphinx, hmm: '/nonexistent/model' };
    await expect(createEngines(bad)).rejects.toThrow(/decoder exited at start/);
  }, 60_000);
});
