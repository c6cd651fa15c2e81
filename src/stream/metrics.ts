// Prometheus metrics of the streaming socket, read from the stream server at scrape time.
import { Gauge, type Registry } from 'prom-client';
import type { StreamServer } from './server.js';

const METRIC_NAMES = ['voxbridge_stream_connections', 'voxbridge_stream_output_dropped_frames', 'voxbridge_stream_refused_overloaded'];

/** Registers the gauges, replacing those of a previous stream server in this process (restart, tests). */
export function registerStreamMetrics(registry: Registry, stream: StreamServer): void {
  for (const name of METRIC_NAMES) registry.removeSingleMetric(name);
  new Gauge({
    name: 'voxbridge_stream_connections',
    help: 'Streaming sockets connected to this node',
    registers: [registry],
    collect() {
      this.set(stream.connections);
    },
  });
  new Gauge({
    name: 'voxbridge_stream_output_dropped_frames',
    help: "audio.output frames dropped since start because a socket was not keeping up (more than 2 KB, about 6 frames, waiting in Node's buffer)",
    registers: [registry],
    collect() {
      this.set(stream.outputDropped);
    },
  });
  new Gauge({
    name: 'voxbridge_stream_refused_overloaded',
    help: 'Stream connects refused since start (1013 media_overloaded) because the media clock ran late (MEDIA_OVERLOAD_LATE_PERCENT)',
    registers: [registry],
    collect() {
      this.set(stream.refusedOverloaded);
    },
  });
}
