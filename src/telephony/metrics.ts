// Prometheus metrics for the SIP/RTP front, read from the service at scrape time (no per-packet
// metric work). The composition root registers them on its registry.
import { Gauge, type Registry } from 'prom-client';
import { nativeRtpIoCounts } from './rtp/native-io.js';
import type { Telephony } from './index.js';

const METRIC_NAMES = [
  'voxbridge_sip_active_calls',
  'voxbridge_sip_calls',
  'voxbridge_rtp_media',
  'voxbridge_rtp_call_quality',
  'voxbridge_sip_refused',
  'voxbridge_sip_requests',
  'voxbridge_sip_capture',
  'voxbridge_rtp_native_io',
];

/** Registers the gauges, replacing those of a previous telephony service in this process (restart, tests). */
export function registerTelephonyMetrics(registry: Registry, telephony: Telephony): void {
  for (const name of METRIC_NAMES) registry.removeSingleMetric(name);
  new Gauge({
    name: 'voxbridge_sip_active_calls',
    help: 'SIP legs currently bridged into sessions',
    registers: [registry],
    collect() {
      this.set(telephony.activeCalls);
    },
  });
  new Gauge({
    name: 'voxbridge_sip_refused',
    help: 'SIP input refused by the front since start, by fault (bad_content_length, datagram_too_large, slow_sender, connection_limit, rate_limited, scanner…)',
    labelNames: ['fault'] as const,
    registers: [registry],
    collect() {
      for (const [fault, n] of Object.entries(telephony.refusedCounts())) this.set({ fault }, n);
    },
  });
  new Gauge({
    name: 'voxbridge_sip_requests',
    help: 'SIP requests taken in since start, by method (behind a trusted edge: only what the edge passed on)',
    labelNames: ['method'] as const,
    registers: [registry],
    collect() {
      for (const [method, n] of Object.entries(telephony.requestCounts())) this.set({ method }, n);
    },
  });
  new Gauge({
    name: 'voxbridge_sip_capture',
    help: 'SIP capture since start: captured, written, dropped (queue full or database too slow), queued, hep_sent, hep_failed',
    labelNames: ['counter'] as const,
    registers: [registry],
    collect() {
      for (const [counter, n] of Object.entries(telephony.captureCounts?.() ?? {})) this.set({ counter }, n);
    },
  });
  new Gauge({
    name: 'voxbridge_sip_calls',
    help: 'SIP calls since start by direction and result (completed, rejected_<status>, failed_<status>)',
    labelNames: ['direction', 'result'] as const,
    registers: [registry],
    collect() {
      for (const [key, n] of Object.entries(telephony.callCounts())) {
        const [direction, result] = key.split(':');
        this.set({ direction, result }, n);
      }
    },
  });
  new Gauge({
    name: 'voxbridge_rtp_media',
    help: "RTP media counters since start: packets_in, packets_out, ignored_source, concealed, dropped (by the jitter buffers, any reason), silence_trimmed (the part of dropped taken from pauses: quiet or missing frames), late, underruns, played, playout_moved_later / playout_moved_earlier (a leg's playout moved within the frame after its arrivals, MEDIA_SUBTICKS), clock_runs / clock_late_runs (runs of the media clock, and those that started a frame late: MEDIA_OVERLOAD_LATE_PERCENT reads them)",
    labelNames: ['counter'] as const,
    registers: [registry],
    collect() {
      const m = telephony.mediaStats();
      const names: Record<string, string> = {
        packetsIn: 'packets_in',
        packetsOut: 'packets_out',
        ignoredSource: 'ignored_source',
        concealed: 'concealed',
        dropped: 'dropped',
        silenceTrimmed: 'silence_trimmed',
        late: 'late',
        underruns: 'underruns',
        played: 'played',
        playoutMovesLater: 'playout_moved_later',
        playoutMovesEarlier: 'playout_moved_earlier',
        clockRuns: 'clock_runs',
        clockLateRuns: 'clock_late_runs',
      };
      for (const [k, label] of Object.entries(names)) this.set({ counter: label }, m[k] ?? 0);
    },
  });
  new Gauge({
    name: 'voxbridge_rtp_call_quality',
    help: 'Live legs, averaged: mos, loss_percent, jitter_ms, rtt_ms (RTCP), jitter_buffer_depth_frames, jitter_buffer_target_frames; rtcp_in/rtcp_out are packet totals of live legs',
    labelNames: ['stat'] as const,
    registers: [registry],
    collect() {
      const m = telephony.mediaStats();
      const names: Record<string, string> = {
        mosAvg: 'mos',
        lossPercentAvg: 'loss_percent',
        jitterMsAvg: 'jitter_ms',
        rttMsAvg: 'rtt_ms',
        jitterDepthFramesAvg: 'jitter_buffer_depth_frames',
        jitterTargetFramesAvg: 'jitter_buffer_target_frames',
        rtcpIn: 'rtcp_in',
        rtcpOut: 'rtcp_out',
      };
      for (const [k, label] of Object.entries(names)) this.set({ stat: label }, m[k] ?? 0);
    },
  });
  new Gauge({
    name: 'voxbridge_rtp_native_io',
    help: 'Batched RTP socket I/O (MEDIA_IO=native) since start: packets read, reads (drain passes over the sockets, one or more per media tick), reads_now (one socket read outside its turn: a leg about to conceal a frame), truncated packets, packets sent, failed sends, send waits (the event loop waited because the send thread held four batches: it falls behind)',
    labelNames: ['counter'] as const,
    registers: [registry],
    collect() {
      const c = nativeRtpIoCounts();
      if (!c) return;
      const names = {
        packets: 'packets',
        reads: 'reads',
        readsNow: 'reads_now',
        truncated: 'truncated',
        sent: 'sent',
        sendErrors: 'send_errors',
        sendWaits: 'send_waits',
      } as const;
      for (const [k, label] of Object.entries(names)) this.set({ counter: label }, c[k as keyof typeof names]);
    },
  });
}
