// Prometheus metrics: request counts and latency by route and status, plus Node process metrics.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'voxbridge_' });

const requests = new Counter({
  name: 'voxbridge_http_requests_total',
  help: 'HTTP requests by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});
const latency = new Histogram({
  name: 'voxbridge_http_request_duration_seconds',
  help: 'HTTP request latency by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

async function metricsPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onResponse', async (req, reply) => {
    // The route pattern, not the URL, keeps label cardinality bounded; unknown routes share one label.
    const labels = { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
  });
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(metricsRegistry.contentType);
    return metricsRegistry.metrics();
  });
}

export default fp(metricsPlugin, { name: 'voxbridge-metrics' });
