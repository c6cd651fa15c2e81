// /v1/webhook_endpoints: endpoint management for organizations (the developer portal uses
// these). Scope webhooks:manage; another organization's endpoint is 404 webhook_endpoint_not_found.
import { deleteWebhookEndpoint, getWebhookEndpoint, listAttempts, listWebhookEndpoints } from '../../store/index.js';
import { presentAttempt, presentEndpoint, SubscriptionError, UrlRefused, WebhookEndpoints } from '../../webhooks/index.js';
import { ApiError } from '../errors.js';
import { authOf, type ApiApp, type ApiDeps } from '../context.js';
import { IdParams, ListOf, PageQuery, withAuthErrors } from '../schemas/common.js';
import { checkMetadata } from '../schemas/checks.js';
import {
  CreateWebhookEndpointBody,
  DeliveriesQuery,
  DeliveryAttemptObject,
  UpdateWebhookEndpointBody,
  WebhookEndpointDeleted,
  WebhookEndpointObject,
  WebhookTestEvent,
} from '../schemas/webhook-endpoints.js';
import { pageRequest } from './paging.js';
import { presentList } from './present.js';

const notFound = (id: string) => new ApiError('webhook_endpoint_not_found', { param: 'id', message: `No webhook endpoint '${id}' in this organization.` });

/** The URL guard's and the subscription's refusals are validation errors on their field. */
async function validated<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof UrlRefused) throw new ApiError('validation_error', { param: 'url', message: err.message });
    if (err instanceof SubscriptionError) throw new ApiError('validation_error', { param: 'events', message: err.message });
    throw err;
  }
}

const TAGS = ['webhook_endpoints'];

export default async function webhookEndpointRoutes(app: ApiApp, deps: ApiDeps): Promise<void> {
  const limits = { metadataMaxKeys: deps.config.limits.metadataMaxKeys, metadataMaxBytes: deps.config.limits.metadataMaxBytes };
  const metaLimits = { maxKeys: limits.metadataMaxKeys, maxBytes: limits.metadataMaxBytes };
  const endpoints = new WebhookEndpoints(deps.db, deps.config);
  const scope = 'webhooks:manage' as const;

  app.post(
    '/v1/webhook_endpoints',
    {
      config: { scope, idempotent: true },
      schema: {
        tags: TAGS,
        summary: 'Create a webhook endpoint',
        description:
          'Scope webhooks:manage. Honours Idempotency-Key. The response carries the signing secret, shown only here and on rotate_secret. The URL is refused when it is not https or its host resolves to a private, loopback, link-local or metadata address (unless configured).',
        body: CreateWebhookEndpointBody(limits),
        response: { 201: WebhookEndpointObject, ...withAuthErrors({ 400: ['invalid_request', 'validation_error'], 409: ['idempotency_conflict'] }) },
      },
    },
    async (req, reply) => {
      const body = req.body;
      checkMetadata('metadata', body.metadata ?? undefined, metaLimits);
      const { row, secret } = await validated(() => endpoints.create(authOf(req).orgId, body));
      reply.code(201);
      return presentEndpoint(row, secret);
    },
  );

  app.get(
    '/v1/webhook_endpoints',
    {
      config: { scope },
      schema: {
        tags: TAGS,
        summary: 'List webhook endpoints',
        description: 'Scope webhooks:manage. Ascending creation (id) order.',
        querystring: PageQuery,
        response: { 200: ListOf(WebhookEndpointObject, 'Webhook endpoints of the organization.'), ...withAuthErrors({ 400: ['invalid_request'] }) },
      },
    },
    async (req) => {
      const page = pageRequest(req.query);
      return presentList('/v1/webhook_endpoints', await listWebhookEndpoints(deps.db, authOf(req).orgId, page), (row) => presentEndpoint(row));
    },
  );

  app.get(
    '/v1/webhook_endpoints/:id',
    {
      config: { scope },
      schema: {
        tags: TAGS,
        summary: 'Retrieve a webhook endpoint',
        description: 'Scope webhooks:manage.',
        params: IdParams,
        response: { 200: WebhookEndpointObject, ...withAuthErrors({ 404: ['webhook_endpoint_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const row = await getWebhookEndpoint(deps.db, authOf(req).orgId, id);
      if (!row) throw notFound(id);
      return presentEndpoint(row);
    },
  );

  app.patch(
    '/v1/webhook_endpoints/:id',
    {
      config: { scope },
      schema: {
        tags: TAGS,
        summary: 'Update a webhook endpoint',
        description:
          'Scope webhooks:manage. Only the given fields change. enabled: true re-enables an endpoint (also one disabled after 3 days of failures) and resumes its pending deliveries.',
        params: IdParams,
        body: UpdateWebhookEndpointBody(limits),
        response: { 200: WebhookEndpointObject, ...withAuthErrors({ 400: ['invalid_request', 'validation_error'], 404: ['webhook_endpoint_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const body = req.body;
      checkMetadata('metadata', body.metadata ?? undefined, metaLimits);
      const row = await validated(() => endpoints.update(authOf(req).orgId, id, body));
      if (!row) throw notFound(id);
      return presentEndpoint(row);
    },
  );

  app.delete(
    '/v1/webhook_endpoints/:id',
    {
      config: { scope },
      schema: {
        tags: TAGS,
        summary: 'Delete a webhook endpoint',
        description: 'Scope webhooks:manage. Pending deliveries to it are dropped.',
        params: IdParams,
        response: { 200: WebhookEndpointDeleted, ...withAuthErrors({ 404: ['webhook_endpoint_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      if (!(await deleteWebhookEndpoint(deps.db, authOf(req).orgId, id))) throw notFound(id);
      return { id, object: 'webhook_endpoint' as const, deleted: true as const };
    },
  );

  app.post(
    '/v1/webhook_endpoints/:id/rotate_secret',
    {
      config: { scope },
      schema: {
        tags: TAGS,
        summary: 'Rotate the signing secret',
        description:
          'Scope webhooks:manage. Returns the endpoint with its new secret (shown once). The previous secret keeps signing alongside it for 24 hours: deliveries carry two v1 signatures meanwhile.',
        params: IdParams,
        response: { 200: WebhookEndpointObject, ...withAuthErrors({ 404: ['webhook_endpoint_not_found'] }) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const rotated = await endpoints.rotateSecret(authOf(req).orgId, id);
      if (!rotated) throw notFound(id);
      return presentEndpoint(rotated.row, rotated.secret);
    },
  );

  app.post(
    '/v1/webhook_endpoints/:id/test',
    {
      config: { scope },
      schema: {
        tags: TAGS,
        summary: 'Send a test event',
        description:
          'Scope webhooks:manage. Queues a webhook.test event for this endpoint only (signed and retried like any event; see its deliveries). An endpoint that is disabled receives it once re-enabled.',
        params: IdParams,
        response: { 202: WebhookTestEvent, ...withAuthErrors({ 404: ['webhook_endpoint_not_found'] }) },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const row = await getWebhookEndpoint(deps.db, authOf(req).orgId, id);
      if (!row) throw notFound(id);
      reply.code(202);
      return endpoints.sendTest(row);
    },
  );

  app.get(
    '/v1/webhook_endpoints/:id/deliveries',
    {
      config: { scope },
      schema: {
        tags: TAGS,
        summary: 'List delivery attempts',
        description:
          'Scope webhooks:manage. The attempt log of this endpoint, newest first: event id and type, attempt number, time, status code or error, duration, next retry. Kept for the retention period (30 days by default).',
        params: IdParams,
        querystring: DeliveriesQuery,
        response: {
          200: ListOf(DeliveryAttemptObject, 'Delivery attempts, newest first.'),
          ...withAuthErrors({ 400: ['invalid_request'], 404: ['webhook_endpoint_not_found'] }),
        },
      },
    },
    async (req) => {
      const { id } = req.params;
      const q = req.query;
      if (!(await getWebhookEndpoint(deps.db, authOf(req).orgId, id))) throw notFound(id);
      const page = await listAttempts(deps.db, id, q.limit ?? 20, q.starting_after);
      const last = page.items[page.items.length - 1];
      return presentList(
        `/v1/webhook_endpoints/${id}/deliveries`,
        { items: page.items, hasMore: page.hasMore, nextCursor: page.hasMore && last ? last.id : null },
        presentAttempt,
      );
    },
  );
}
