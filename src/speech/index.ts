// Public door of speech/: engine interfaces, the embedded engines, createEngines() which picks them
// from configuration (provider 'none' -> null, so the API can refuse what no engine serves), the
// embedded fallback for remote engines, and the per-organization engine directory.
export * from './types.js';
export { toIso1, toIso3 } from './languages.js';
export { PocketsphinxEngine, type PocketsphinxOptions, type DecoderStats } from './stt/pocketsphinx/pocketsphinx-engine.js';
export { ensureDecoderBinary, DEFAULT_DECODER_BINARY } from './stt/pocketsphinx/decoder-binary.js';
export { VoskStt, type VoskOptions } from './stt/vosk/vosk-engine.js';
export { ApertiumTranslator, discoverApertiumModes, type ApertiumOptions } from './translate/apertium.js';
export { LibreTranslateTranslator, type LibreTranslateOptions } from './translate/libretranslate.js';
export { EspeakTts, BASE_WPM, type EspeakOptions } from './tts/espeak.js';
export { OpenAiStt, type OpenAiSttOptions } from './stt/openai/openai-stt.js';
export { DeepgramStt, type DeepgramOptions } from './stt/deepgram/deepgram-stt.js';
export { OpenAiTts, OPENAI_PCM_RATE, type OpenAiTtsOptions } from './tts/openai-tts.js';
export { ElevenLabsTts, type ElevenLabsOptions } from './tts/elevenlabs-tts.js';
export { EngineEndpoint, EngineHttpError, DEFAULT_POLICY, type EndpointPolicy } from './http/engine-endpoint.js';
export { WHISPER_LANGUAGES, whisperLanguageToIso1 } from './whisper-languages.js';

export { createEngines, buildEngines, type CreateEnginesOptions } from './factory.js';
export { EmbeddedEngines, EMBEDDED_PROVIDERS } from './embedded.js';
export { FallbackStt, FallbackTranslator, FallbackTts } from './fallback.js';
export { EngineDirectory, ORG_ENGINE_PROVIDERS, checkOrgEngineStage, type EngineStage, type EngineDirectoryOptions } from './directory.js';
