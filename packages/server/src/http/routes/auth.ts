/** The device-code endpoints an agent calls (spec 4.2; docs/api.md 4.2). */
import { Type } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import type { DeviceFlowDeps } from '../../domain/device-flow.js';
import { pollDeviceFlow, startDeviceFlow } from '../../domain/device-flow.js';
import {
  type GuardDeps,
  isOverlongPollToken,
  throttleDeviceStarts,
  throttlePolls,
} from '../../domain/device-guards.js';
import { ApiError } from '../../errors.js';
import type { TypedApp } from '../typed-app.js';

function tooMany(retryAfterSeconds: number, what: string): ApiError {
  return new ApiError('rate_limited', { message: `${what}; retry in ${retryAfterSeconds} s.`, retryAfterSeconds });
}

const errors = { '4XX': { $ref: 'Error#' } };

/** What the device-code endpoints use. */
export interface AuthRouteDeps {
  readonly config: Config;
  readonly device: DeviceFlowDeps;
  readonly guards: GuardDeps;
}

export async function authRoutes(app: TypedApp, deps: AuthRouteDeps): Promise<void> {
  registerStart(app, deps);
  registerPoll(app, deps);
}

/** POST /api/auth/start, at most `maxAuthStartsPerMinute` per client address (docs/api.md 4.2). */
function registerStart(app: TypedApp, { config, device, guards }: AuthRouteDeps): void {
  app.post(
    '/api/auth/start',
    {
      // Unauthenticated: a body that could not be a label is refused before it is read (docs/api.md 8).
      bodyLimit: config.limits.maxAuthStartBodyBytes,
      // The body is optional (curl -X POST with nothing): validate an empty object instead.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: 'Begin the device-code flow: show verification_url and code to a human, then poll',
        tags: ['auth'],
        body: Type.Object({ label: Type.Optional(Type.String({ description: 'Token label, cut to 64 characters' })) }),
        response: {
          200: Type.Object({
            code: Type.String({ description: 'XXXX-XXXX, for the human' }),
            verification_url: Type.String({ format: 'uri' }),
            poll_token: Type.String(),
            expires_in: Type.Integer({ description: 'seconds' }),
            poll_interval: Type.Integer({ description: 'seconds' }),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const started = await throttleDeviceStarts(guards, request.ip);
      if (!started.allowed) throw tooMany(started.retryAfterSeconds, 'Too many sign-in requests from this address');
      const flow = await startDeviceFlow(device, request.body.label);
      return {
        code: flow.code,
        verification_url: `${config.baseUrl}/verify?code=${flow.code}`,
        poll_token: flow.pollToken,
        expires_in: flow.expiresIn,
        poll_interval: flow.pollInterval,
      };
    },
  );
}

/** GET /api/auth/poll: always 200 with a status, throttled per poll token (docs/api.md 3.1, 4.2). */
function registerPoll(app: TypedApp, { device, guards }: AuthRouteDeps): void {
  app.get(
    '/api/auth/poll',
    {
      schema: {
        summary: 'Poll every poll_interval seconds while status is pending; api_token comes exactly once',
        tags: ['auth'],
        querystring: Type.Object({ token: Type.Optional(Type.String()) }),
        response: {
          200: Type.Object({
            status: Type.Union(['pending', 'verified', 'claimed', 'expired', 'not_found'].map((s) => Type.Literal(s))),
            api_token: Type.Optional(Type.String()),
            user_id: Type.Optional(Type.String()),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const token = request.query.token;
      if (token === undefined || token === '') throw new ApiError('token_required');
      if (isOverlongPollToken(token)) return { status: 'not_found' };
      // docs/api.md 4.2: poll always answers 200 with a status. Polling far faster than poll_interval is answered
      // "pending" without looking, with Retry-After as a hint, until the client slows down.
      const polled = await throttlePolls(guards, token);
      if (!polled.allowed) {
        reply.header('retry-after', String(polled.retryAfterSeconds));
        return { status: 'pending' as const };
      }
      const result = await pollDeviceFlow(device, token);
      return result.status === 'verified'
        ? { status: result.status, api_token: result.apiToken, user_id: result.userId }
        : { status: result.status };
    },
  );
}
