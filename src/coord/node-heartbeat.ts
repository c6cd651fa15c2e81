// Node heartbeat: every node publishes, every period, what the operator view shows about it (roles,
// addresses, uptime, live sessions and calls, CPU, event-loop delay, memory, STT pool use) and the
// live quality of the phone legs it carries, so any node's console sees the whole gateway.
//
// Keys (under the deployment's prefix):
//   node:<id>        the record (JSON), TTL 3 periods: a node that stops beating disappears
//   node-calls:<id>  its live legs with their RTP/RTCP quality (JSON array), same TTL; absent with none
//   nodes-seen       sorted set id → time of the last beat (Redis clock), so listing needs no SCAN and
//                    a node whose record expired is still shown as lost for a while
// Times come from Redis (TIME) so nodes with skewed clocks agree on a record's age.
import os from 'node:os';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SipContact } from './ownership.js';
import type { MediaOverloadView } from '../media/index.js';

export const NODES_SEEN_KEY = 'nodes-seen';
const nodeKey = (id: string): string => `node:${id}`;
const nodeCallsKey = (id: string): string => `node-calls:${id}`;
/** A record lives this many periods after its last beat. */
export const TTL_PERIODS = 3;
/** A record older than this many periods missed a beat: the node is shown stale. */
export const STALE_PERIODS = 1.5;
/** A node whose record expired is listed as lost this long after its last beat, then forgotten. */
export const DEFAULT_FORGET_AFTER_MS = 10 * 60_000;

/**
 * `JSON.stringify(items)` as bytes, written item by item. A node's leg list is about 360 bytes a leg, so at
 * 400 legs one string would be ~144 KB: a large object, which V8 puts where a scavenge promotes it to old
 * space at once, every period, the largest share of what a node carrying RTP calls promoted (BENCHMARKS.md,
 * forty-second pass). Each item's string here is small and dies young, and a Buffer's bytes are off the heap.
 */
export function jsonArrayBuffer(items: readonly object[]): Buffer {
  const parts = items.map((item) => JSON.stringify(item));
  let size = 2 + Math.max(0, parts.length - 1); // brackets and commas
  for (const part of parts) size += Buffer.byteLength(part);
  const out = Buffer.allocUnsafe(size);
  let at = out.write('[', 0, 'latin1');
  parts.forEach((part, i) => {
    if (i > 0) at += out.write(',', at, 'latin1');
    at += out.write(part, at);
  });
  out.write(']', at, 'latin1');
  return out;
}

/** Decoder pool of the embedded STT engine (pocketsphinx): decoders in use, pool size, utterances queued. */
export interface SttPoolUse {
  busy: number;
  size: number;
  waiting: number;
}

/** One live phone leg as any node's operator view shows it. */
export interface LegSnapshot {
  /** calls.id */
  id: string;
  session_id: string;
  call_sid: string;
  party: string;
  direction: string;
  /** The leg's RTP/RTCP quality so far (telephony's CallQuality). */
  quality: object | null;
}

/** What `node:<id>` holds. */
export interface NodeRecord {
  id: string;
  roles: string[];
  /** Public HTTP URL (config.publicUrl). */
  url: string;
  /** SIP contact (advertised address, bound port); null without SIP. */
  sip: SipContact | null;
  started_at: string;
  period_ms: number;
  uptime_seconds: number;
  /** null without the media role. */
  live_sessions: number | null;
  /** null without SIP. */
  live_calls: number | null;
  /** Process CPU over the last period, % of one core (above 100 with busy worker threads). */
  cpu_percent: number;
  cores: number;
  load_average: number[];
  /** Event-loop delay over the last period. */
  event_loop_delay_ms: { p50: number; p99: number; max: number };
  rss_bytes: number;
  /** null when this node runs no embedded STT pool (or has not started it). */
  stt_pool: SttPoolUse | null;
  /** The media clock's admission (media/overload-guard.ts); null on a node without the media role. */
  media_overload: MediaOverloadView | null;
}

interface LastBeat {
  id: string;
  /** Time of the last beat (Redis clock). */
  last_beat_at: string;
  beat_age_ms: number;
}

/** A node as listed: its record while it has one, the age of its last beat and its state. */
export type NodeView = (NodeRecord & LastBeat & { state: 'live' | 'stale' }) | (LastBeat & { state: 'lost' });

/** What the node measures itself besides the process figures; each read once per beat. */
export interface HeartbeatSources {
  liveSessions?: () => number;
  liveCalls?: () => number;
  legs?: () => LegSnapshot[];
  sttPool?: () => SttPoolUse | null;
  mediaOverload?: () => MediaOverloadView;
}

export interface NodeHeartbeatOptions {
  redis: Redis;
  self: { id: string; roles: string[]; url: string; sip: SipContact | null };
  periodMs: number;
  sources?: HeartbeatSources;
  logger?: Logger;
  forgetAfterMs?: number;
}

// KEYS: node key, node-calls key, nodes-seen. ARGV: record json, legs json ('' = none), ttl ms,
// node id, forget-after ms. Returns the beat time (Redis clock, ms).
const BEAT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
redis.call('ZADD', KEYS[3], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[5]))
return now`;

const ms = (ns: number): number => Math.round(ns / 1e4) / 100;

/** Publishes this node's record every period until stop(), which removes it (a clean shutdown). */
export class NodeHeartbeat {
  private readonly loopDelay: IntervalHistogram;
  private readonly startedAt = new Date();
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private stopped = false;
  private lastCpu = process.cpuUsage();
  private lastCpuAt = performance.now();
  private readonly forgetAfterMs: number;

  constructor(private readonly o: NodeHeartbeatOptions) {
    this.loopDelay = monitorEventLoopDelay({ resolution: 20 });
    this.forgetAfterMs = o.forgetAfterMs ?? DEFAULT_FORGET_AFTER_MS;
  }

  /** Publishes the first record now (so the node is listed once start resolves), then every period. */
  async start(): Promise<void> {
    this.loopDelay.enable();
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.o.periodMs);
    this.timer.unref();
  }

  /** This period's figures (CPU and event-loop delay since the previous sample). */
  private sample(): { record: NodeRecord; legs: LegSnapshot[] } {
    const now = performance.now();
    const cpu = process.cpuUsage(this.lastCpu);
    const elapsedMs = Math.max(1, now - this.lastCpuAt);
    this.lastCpu = process.cpuUsage();
    this.lastCpuAt = now;
    const d = this.loopDelay;
    const record: NodeRecord = {
      id: this.o.self.id,
      roles: this.o.self.roles,
      url: this.o.self.url,
      sip: this.o.self.sip,
      started_at: this.startedAt.toISOString(),
      period_ms: this.o.periodMs,
      uptime_seconds: Math.round((Date.now() - this.startedAt.getTime()) / 1000),
      live_sessions: this.o.sources?.liveSessions?.() ?? null,
      live_calls: this.o.sources?.liveCalls?.() ?? null,
      cpu_percent: Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 1000) / 10,
      cores: os.availableParallelism(),
      load_average: os.loadavg().map((l) => Math.round(l * 100) / 100),
      event_loop_delay_ms: d.count > 0 ? { p50: ms(d.percentile(50)), p99: ms(d.percentile(99)), max: ms(d.max) } : { p50: 0, p99: 0, max: 0 },
      rss_bytes: process.memoryUsage.rss(),
      stt_pool: this.o.sources?.sttPool?.() ?? null,
      media_overload: this.o.sources?.mediaOverload?.() ?? null,
    };
    d.reset();
    return { record, legs: this.o.sources?.legs?.() ?? [] };
  }

  /** Publishes the record now (the timer does every period); a failure is logged, never thrown. */
  beat(): Promise<void> {
    // One beat at a time: a slow Redis delays the next record rather than stacking writes.
    if (this.stopped || this.inFlight) return this.inFlight ?? Promise.resolve();
    const p = (async () => {
      try {
        const { record, legs } = this.sample();
        const { id } = this.o.self;
        await this.o.redis.eval(
          BEAT,
          3,
          nodeKey(id),
          nodeCallsKey(id),
          NODES_SEEN_KEY,
          JSON.stringify(record),
          legs.length ? jsonArrayBuffer(legs) : '',
          this.o.periodMs * TTL_PERIODS,
          id,
          this.forgetAfterMs,
        );
      } catch (err) {
        this.o.logger?.warn({ err }, 'node heartbeat failed');
      }
    })();
    this.inFlight = p.finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  /** Stops beating and removes the record: a node shut down cleanly is no longer listed. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.loopDelay.disable();
    await this.inFlight;
    const { id } = this.o.self;
    await this.o.redis.multi().del(nodeKey(id), nodeCallsKey(id)).zrem(NODES_SEEN_KEY, id).exec();
  }
}

function parse<T>(raw: string | null): T | null {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

async function redisNowMs(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Every node that beat within the forget window, by id: live, stale (missed a beat) or lost (record expired). */
export async function listNodes(redis: Redis): Promise<NodeView[]> {
  const [now, seen] = await Promise.all([redisNowMs(redis), redis.zrange(NODES_SEEN_KEY, '0', '-1', 'WITHSCORES')]);
  const beats = new Map<string, number>();
  for (let i = 0; i + 1 < seen.length; i += 2) beats.set(String(seen[i]), Number(seen[i + 1]));
  const ids = [...beats.keys()].sort();
  if (ids.length === 0) return [];
  const records = await redis.mget(...ids.map(nodeKey));
  return ids.map((id, i) => {
    const at = beats.get(id)!;
    const base = { id, last_beat_at: new Date(at).toISOString(), beat_age_ms: Math.max(0, now - at) };
    const record = parse<NodeRecord>(records[i] ?? null);
    if (!record) return { ...base, state: 'lost' as const };
    const state = base.beat_age_ms > record.period_ms * STALE_PERIODS ? ('stale' as const) : ('live' as const);
    return { ...record, ...base, state };
  });
}

/** Live legs published by the given nodes, by calls.id, with the node carrying each. */
export async function liveLegsOf(redis: Redis, nodeIds: string[]): Promise<Map<string, LegSnapshot & { node: string }>> {
  const out = new Map<string, LegSnapshot & { node: string }>();
  if (nodeIds.length === 0) return out;
  const lists = await redis.mget(...nodeIds.map(nodeCallsKey));
  nodeIds.forEach((node, i) => {
    for (const leg of parse<LegSnapshot[]>(lists[i] ?? null) ?? []) out.set(leg.id, { ...leg, node });
  });
  return out;
}
