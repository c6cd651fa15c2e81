import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApertiumTranslator, SpeechEngineError, discoverApertiumModes } from '../../../src/speech/index.js';
import { caseForRules } from '../../../src/speech/translate/apertium.js';

describe('ApertiumTranslator (embedded)', () => {
  it('discovers the installed pairs as ISO 639-1 codes', async () => {
    const t = await ApertiumTranslator.create({ timeoutMs: 10_000 });
    expect(t.pairs()).toEqual(
      expect.arrayContaining([
        { from: 'en', to: 'es' },
        { from: 'es', to: 'en' },
      ]),
    );
    expect(t.supports('en', 'es')).toBe(true);
    expect(t.supports('en', 'de')).toBe(false);
    expect(t.supports('fr', 'fr')).toBe(true);
  });

  it('maps mode names (3- and 2-letter codes, variants, debug modes)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vb-modes-'));
    try {
      for (const f of ['eng-spa.mode', 'spa-eng_US.mode', 'spa-eng.mode', 'en-ca.mode', 'cat-glg.mode', 'eng-spa-morph.mode', 'README']) {
        await writeFile(path.join(dir, f), '');
      }
      const modes = await discoverApertiumModes(dir);
      expect(Object.fromEntries(modes)).toEqual({ 'en:es': 'eng-spa', 'es:en': 'spa-eng', 'en:ca': 'en-ca', 'ca:gl': 'cat-glg' });
      expect((await discoverApertiumModes(path.join(dir, 'nope'))).size).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('translates "hello" to Spanish and back, text passed safely', async () => {
    const t = await ApertiumTranslator.create({ timeoutMs: 10_000 });
    const t0 = performance.now();
    const es = await t.translate('hello', 'en', 'es');
    const ms = performance.now() - t0;
    expect(es.toLowerCase()).toMatch(/hola/);
    expect((await t.translate('Buenos días, ¿cómo estás?', 'es', 'en')).toLowerCase()).toMatch(/good morning/);
    // Shell metacharacters and option-looking text are just text.
    const marker = path.join(os.tmpdir(), `vb-apertium-marker-${process.pid}`);
    expect(await t.translate(`-h $(touch ${marker}) \`id\` "$1"`, 'en', 'es')).toContain('$(');
    expect(existsSync(marker)).toBe(false);
    // -u: unknown words come through without the '*' mark.
    expect(await t.translate('hello Zyxwvutian', 'en', 'es')).not.toContain('*');
    expect(await t.translate('   ', 'en', 'es')).toBe('   ');
    console.log(`[measure] apertium en->es one call: ${ms.toFixed(0)} ms`);
  }, 30_000);

  it('reads recognizer output (lower case, no punctuation) with the English pronoun capitalized', async () => {
    expect(caseForRules("i think i'm sure but is it in italy i said", 'en')).toBe("I think I'm sure but is it in italy I said");
    expect(caseForRules('i', 'es')).toBe('i');
    const t = await ApertiumTranslator.create({ timeoutMs: 10_000 });
    expect(await t.translate('i would like to check my account balance', 'en', 'es')).toMatch(/^Me gustaría comprobar mi saldo/);
  }, 30_000);

  it('refuses a pair it does not have, and times out', async () => {
    const t = await ApertiumTranslator.create({ timeoutMs: 10_000 });
    await expect(t.translate('hello', 'en', 'de')).rejects.toMatchObject({ code: 'translate_unsupported' });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vb-apertium-'));
    try {
      const hang = path.join(dir, 'apertium-hangs');
      await writeFile(hang, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
      const slow = await ApertiumTranslator.create({ timeoutMs: 300, binary: hang });
      await expect(slow.translate('hello', 'en', 'es')).rejects.toMatchObject({ code: 'translate_timeout' });
      const broken = await ApertiumTranslator.create({ timeoutMs: 5000, binary: path.join(dir, 'missing') });
      const err = await broken.translate('hello', 'en', 'es').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SpeechEngineError);
      expect(err).toMatchObject({ code: 'translate_failed' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
