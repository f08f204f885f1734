/**
 * The device-code flow (docs/api.md section 5.4) as one call: start, show the URL and code to a
 * human through a callback, poll every poll_interval seconds while pending, return the token that is revealed
 * exactly once. Any status other than pending ends the flow.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { HtmlDropClient } from './client.js';
import { HtmlDropError } from './errors.js';
import type { DeviceFlowStart } from './types.js';

/** What the human must see. */
export interface DeviceCodePrompt {
  /** XXXX-XXXX. */
  readonly code: string;
  /** The page where the human signs in and approves. */
  readonly verificationUrl: string;
  /** Seconds the request stays valid (600). */
  readonly expiresIn: number;
  /** Unix milliseconds after which polling stops. */
  readonly expiresAt: number;
  /** Seconds between polls. */
  readonly pollInterval: number;
  /** Secret that lets whoever holds it collect the token; pass to waitForDeviceToken() to resume. */
  readonly pollToken: string;
}

export interface DeviceLoginResult {
  readonly apiToken: string;
  readonly userId: string;
}

export interface DeviceLoginOptions {
  /** Free-form name for the token (the service cuts it to 64 characters), e.g. "claude on laptop". */
  readonly label?: string;
  /** Shows the URL and code to the human. Called once, before the first poll. */
  readonly onCode: (prompt: DeviceCodePrompt) => void | Promise<void>;
  /** Called after each poll that is still pending. */
  readonly onPending?: (remainingSeconds: number) => void;
  /** Stops waiting; the call rejects with code `aborted`. */
  readonly signal?: AbortSignal;
}

export interface WaitOptions {
  readonly pollToken: string;
  /** Seconds between polls; default 2. */
  readonly pollInterval?: number;
  /** Unix milliseconds; default 600 s from now. */
  readonly expiresAt?: number;
  readonly onPending?: (remainingSeconds: number) => void;
  readonly signal?: AbortSignal;
}

/** An aborted request inside the flow reads as a cancelled sign-in. */
function cancelled(error: unknown): never {
  if (error instanceof HtmlDropError && error.code === 'aborted') {
    throw new HtmlDropError('aborted', 'Sign-in was cancelled.', { cause: error });
  }
  throw error;
}

export function promptOf(start: DeviceFlowStart, now = Date.now()): DeviceCodePrompt {
  return {
    code: start.code,
    verificationUrl: start.verification_url,
    expiresIn: start.expires_in,
    expiresAt: now + start.expires_in * 1000,
    pollInterval: start.poll_interval,
    pollToken: start.poll_token,
  };
}

/** The whole flow in one call. */
export async function deviceLogin(client: HtmlDropClient, options: DeviceLoginOptions): Promise<DeviceLoginResult> {
  const signal = options.signal;
  const start = await client.startDeviceFlow(options.label, signal === undefined ? {} : { signal }).catch(cancelled);
  const prompt = promptOf(start);
  await options.onCode(prompt);
  return waitForDeviceToken(client, {
    pollToken: prompt.pollToken,
    pollInterval: prompt.pollInterval,
    expiresAt: prompt.expiresAt,
    ...(options.onPending === undefined ? {} : { onPending: options.onPending }),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** Polls an already started flow until it ends. */
export async function waitForDeviceToken(client: HtmlDropClient, options: WaitOptions): Promise<DeviceLoginResult> {
  const interval = Math.max(1, options.pollInterval ?? 2) * 1000;
  const expiresAt = options.expiresAt ?? Date.now() + 600_000;
  const signal = options.signal;
  const call = signal === undefined ? {} : { signal };
  for (;;) {
    if (signal?.aborted === true) throw new HtmlDropError('aborted', 'Sign-in was cancelled.');
    const poll = await client.pollDeviceFlow(options.pollToken, call).catch(cancelled);
    switch (poll.status) {
      case 'verified':
        if (typeof poll.api_token !== 'string' || typeof poll.user_id !== 'string') {
          throw new HtmlDropError('bad_response', 'The service reported "verified" without a token.');
        }
        return { apiToken: poll.api_token, userId: poll.user_id };
      case 'pending':
        break;
      case 'claimed':
        throw new HtmlDropError(
          'device_flow_claimed',
          'This sign-in request was already used: its token went to another poll. Run the login again.',
        );
      case 'expired':
        throw new HtmlDropError(
          'device_flow_expired',
          'The sign-in request was denied or expired before it was approved. Run the login again.',
        );
      case 'not_found':
        throw new HtmlDropError('device_flow_not_found', 'The service does not know this sign-in request.');
      default:
        throw new HtmlDropError('bad_response', `Unknown sign-in status "${String(poll.status)}".`);
    }
    const remaining = expiresAt - Date.now();
    if (remaining <= 0) {
      throw new HtmlDropError(
        'device_flow_expired',
        'Nobody approved the sign-in request in time. Run the login again.',
      );
    }
    options.onPending?.(Math.ceil(remaining / 1000));
    try {
      await sleep(Math.min(interval, remaining), undefined, call);
    } catch {
      throw new HtmlDropError('aborted', 'Sign-in was cancelled.');
    }
  }
}
