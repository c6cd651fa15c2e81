// Configuration errors name the bad setting and the environment variable that set it (src/config).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.js';

const fails = (env: NodeJS.ProcessEnv): string => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('loadConfig accepted a bad setting');
};

describe('loadConfig errors', () => {
  it('loads the defaults without any variable set', () => {
    const cfg = loadConfig({});
    expect(cfg.sip.rtpPortMin).toBeLessThan(cfg.sip.rtpPortMax);
  });

  it('names the setting and its variable when an integer is not a number', () => {
    expect(fails({ RTP_PORT_MIN: 'ten' })).toMatch(/sip\.rtpPortMin \(RTP_PORT_MIN\): .*got "ten"/);
  });

  it('takes the heartbeat period from NODE_HEARTBEAT_MS and refuses one below 100 ms', () => {
    expect(loadConfig({ NODE_HEARTBEAT_MS: '2000' }).limits.nodeHeartbeatMs).toBe(2000);
    expect(fails({ NODE_HEARTBEAT_MS: '10' })).toMatch(/limits\.nodeHeartbeatMs \(NODE_HEARTBEAT_MS\)/);
  });

  it('dials through the edge named by SIP_EDGE_OUTBOUND_PROXY (host:port), directly when unset', () => {
    expect(loadConfig({}).sip.trustedEdge.outboundProxy).toBeNull();
    expect(loadConfig({ SIP_EDGE_OUTBOUND_PROXY: '10.0.0.5:5060' }).sip.trustedEdge.outboundProxy).toBe('10.0.0.5:5060');
    expect(fails({ SIP_EDGE_OUTBOUND_PROXY: 'sip:edge' })).toMatch(/sip\.trustedEdge\.outboundProxy \(SIP_EDGE_OUTBOUND_PROXY\)/);
  });

  it('turns calls away at 5 % of late media-clock runs by default; MEDIA_OVERLOAD_LATE_PERCENT moves it, 0 turns it off', () => {
    expect(loadConfig({}).sip.overloadLatePercent).toBe(5);
    expect(loadConfig({ MEDIA_OVERLOAD_LATE_PERCENT: '0' }).sip.overloadLatePercent).toBe(0);
    expect(fails({ MEDIA_OVERLOAD_LATE_PERCENT: '101' })).toMatch(/sip\.overloadLatePercent \(MEDIA_OVERLOAD_LATE_PERCENT\)/);
  });

  it('also turns them away at 90 % of event-loop utilization by default; MEDIA_OVERLOAD_LOOP_PERCENT moves it, 0 turns it off', () => {
    expect(loadConfig({}).sip.overloadLoopPercent).toBe(90);
    expect(loadConfig({ MEDIA_OVERLOAD_LOOP_PERCENT: '0' }).sip.overloadLoopPercent).toBe(0);
    expect(fails({ MEDIA_OVERLOAD_LOOP_PERCENT: '-1' })).toMatch(/sip\.overloadLoopPercent \(MEDIA_OVERLOAD_LOOP_PERCENT\)/);
  });

  it('handles SIP UDP datagrams 3 ms per loop turn, 4,096 waiting at most, by default; 0 handles each as read', () => {
    expect(loadConfig({}).sip).toMatchObject({ udpIngressBudgetMs: 3, udpIngressQueueMax: 4096 });
    expect(loadConfig({ SIP_UDP_INGRESS_BUDGET_MS: '0', SIP_UDP_INGRESS_QUEUE_MAX: '100' }).sip).toMatchObject({
      udpIngressBudgetMs: 0,
      udpIngressQueueMax: 100,
    });
    expect(fails({ SIP_UDP_INGRESS_QUEUE_MAX: '0' })).toMatch(/sip\.udpIngressQueueMax \(SIP_UDP_INGRESS_QUEUE_MAX\)/);
  });

  it('fans webhook events out at most every 100 ms by default; WEBHOOKS_FAN_OUT_INTERVAL_MS moves it and must be positive', () => {
    expect(loadConfig({}).webhooks.fanOutIntervalMs).toBe(100);
    expect(loadConfig({ WEBHOOKS_FAN_OUT_INTERVAL_MS: '250' }).webhooks.fanOutIntervalMs).toBe(250);
    expect(fails({ WEBHOOKS_FAN_OUT_INTERVAL_MS: '0' })).toMatch(/webhooks\.fanOutIntervalMs \(WEBHOOKS_FAN_OUT_INTERVAL_MS\)/);
  });

  it('names the variable of a boolean that is neither true nor false', () => {
    expect(fails({ RECORDINGS_S3_FORCE_PATH_STYLE: 'maybe' })).toMatch(/recordings\.s3\.forcePathStyle \(RECORDINGS_S3_FORCE_PATH_STYLE\)/);
  });

  it('batches RTP socket I/O when it can by default; MEDIA_IO picks one, and native does not go with socket workers', () => {
    expect(loadConfig({}).sip.mediaIo).toBe('auto');
    expect(loadConfig({ MEDIA_IO: 'dgram' }).sip.mediaIo).toBe('dgram');
    expect(fails({ MEDIA_IO: 'uring' })).toMatch(/sip\.mediaIo \(MEDIA_IO\)/);
    expect(fails({ MEDIA_IO: 'native', MEDIA_WORKERS: '2' })).toMatch(/MEDIA_IO.*MEDIA_WORKERS/);
    expect(loadConfig({ MEDIA_IO: 'auto', MEDIA_WORKERS: '2' }).sip.mediaWorkers).toBe(2);
    expect(loadConfig({ MEDIA_IO_URING: 'false' }).sip.mediaIoUring).toBe(false);
    expect(loadConfig({ MEDIA_IO_SEND_THREAD: 'false' }).sip.mediaIoSendThread).toBe(false);
    expect(loadConfig({ MEDIA_IO_RECV_THREAD: 'true' }).sip.mediaIoRecvThread).toBe(true);
    expect(loadConfig({ MEDIA_IO_CONNECT: 'false' }).sip.mediaIoConnect).toBe(false);
  });

  it("trims legs' unneeded standing jitter-buffer frames unless JITTER_TRIM_SLACK=false", () => {
    expect(loadConfig({}).sip.jitterTrimSlack).toBeUndefined(); // LegSetup's default: true
    expect(loadConfig({ JITTER_TRIM_SLACK: 'false' }).sip.jitterTrimSlack).toBe(false);
    expect(fails({ JITTER_TRIM_SLACK: 'sometimes' })).toMatch(/JITTER_TRIM_SLACK/);
  });

  it('lets the old generation grow by 100 % between full collections unless HEAP_GROWING_PERCENT says otherwise', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(100);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(fails({ HEAP_GROWING_PERCENT: '-5' })).toMatch(/heapGrowingPercent \(HEAP_GROWING_PERCENT\)/);
    expect(fails({ HEAP_GROWING_PERCENT: 'lots' })).toMatch(/heapGrowingPercent \(HEAP_GROWING_PERCENT\)/);
  });

  it('bounds the session pacer live margin: a floor of 0 or 1 frame, a ceiling of 1 to 10', () => {
    expect(loadConfig({}).liveMinMarginFrames).toBeUndefined(); // the pacer's defaults: 0 and 4
    expect(loadConfig({ LIVE_MIN_MARGIN_FRAMES: '1', LIVE_MAX_MARGIN_FRAMES: '6' })).toMatchObject({ liveMinMarginFrames: 1, liveMaxMarginFrames: 6 });
    expect(fails({ LIVE_MIN_MARGIN_FRAMES: '2' })).toMatch(/liveMinMarginFrames \(LIVE_MIN_MARGIN_FRAMES\)/);
    expect(fails({ LIVE_MAX_MARGIN_FRAMES: '0' })).toMatch(/liveMaxMarginFrames \(LIVE_MAX_MARGIN_FRAMES\)/);
  });

  it('names both variables of an RTP port range that is upside down', () => {
    expect(fails({ RTP_PORT_MIN: '30000', RTP_PORT_MAX: '20000' })).toMatch(/RTP_PORT_MIN.*RTP_PORT_MAX/);
  });

  it('refuses the development secret with live keys, naming SECRET_KEY', () => {
    expect(fails({ API_ENVIRONMENT: 'live' })).toMatch(/secretKey \(SECRET_KEY\)/);
  });

  it('lists every missing S3 setting by variable when S3 storage is chosen', () => {
    const msg = fails({ RECORDINGS_STORAGE: 's3', RECORDINGS_S3_BUCKET: 'b' });
    expect(msg).toContain('RECORDINGS_S3_ACCESS_KEY_ID');
    expect(msg).toContain('RECORDINGS_S3_SECRET_ACCESS_KEY');
    expect(msg).not.toContain('RECORDINGS_S3_BUCKET');
  });

  it('summarizes extractively by default; an LLM summary needs its URL and model, named by variable', () => {
    expect(loadConfig({}).postCall.summary.engine).toBe('extractive');
    expect(fails({ ANALYSIS_SUMMARY_ENGINE: 'openai_compatible', ANALYSIS_LLM_MODEL: 'm' })).toMatch(/ANALYSIS_LLM_BASE_URL.*ANALYSIS_LLM_MODEL/);
    expect(fails({ ANALYSIS_SUMMARY_ENGINE: 'gpt' })).toMatch(/postCall\.summary\.engine \(ANALYSIS_SUMMARY_ENGINE\)/);
    const llm = loadConfig({ ANALYSIS_SUMMARY_ENGINE: 'openai_compatible', ANALYSIS_LLM_BASE_URL: 'http://127.0.0.1:11434/v1', ANALYSIS_LLM_MODEL: 'llama3' });
    expect(llm.postCall.summary).toMatchObject({ engine: 'openai_compatible', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3', apiKey: '' });
  });

  it('says which profile file is missing', () => {
    expect(fails({ VOXBRIDGE_ENV: 'no-such-profile' })).toMatch(/VOXBRIDGE_ENV=no-such-profile .*does not exist/);
  });

  it('uses the Silero VAD by default and needs its model only on a media node', () => {
    expect(loadConfig({}).vad.engine).toBe('silero');
    const missing = { VAD_SILERO_MODEL: '/nonexistent/silero_vad.onnx' };
    expect(fails(missing)).toMatch(/vad\.sileroModel \(VAD_SILERO_MODEL\).*VAD_ENGINE=energy/);
    expect(loadConfig({ ...missing, VOXBRIDGE_ROLES: 'api,worker' }).vad.engine).toBe('silero');
    expect(loadConfig({ ...missing, VAD_ENGINE: 'energy' }).vad.engine).toBe('energy');
    expect(loadConfig({ VAD_ENGINE: 'silero' }).vad.engine).toBe('silero'); // the model fetched by setup
  });
});
