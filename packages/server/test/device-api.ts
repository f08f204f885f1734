/** The agent's side of the device flow over HTTP, for tests against a listening service. */
import { expect } from 'vitest';

export interface StartedFlow {
  readonly code: string;
  readonly verification_url: string;
  readonly poll_token: string;
}

export interface PollAnswer {
  readonly status: string;
  readonly api_token?: string;
  readonly user_id?: string;
}

export async function startFlow(base: string, label?: string): Promise<StartedFlow> {
  const response = await fetch(`${base}/api/auth/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(label === undefined ? {} : { label }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as StartedFlow;
}

export async function pollFlow(base: string, pollToken: string): Promise<PollAnswer> {
  const response = await fetch(`${base}/api/auth/poll?token=${encodeURIComponent(pollToken)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as PollAnswer;
}

/** Spec 3.1: the first poll after approval reveals the token, every later one reads claimed. Returns the token. */
export async function expectTokenOnce(base: string, pollToken: string): Promise<{ apiToken: string; userId: string }> {
  const verified = await pollFlow(base, pollToken);
  expect(verified).toEqual({
    status: 'verified',
    api_token: expect.stringMatching(/^hd_/),
    user_id: expect.stringMatching(/^u_/),
  });
  expect(await pollFlow(base, pollToken)).toEqual({ status: 'claimed' });
  return { apiToken: String(verified.api_token), userId: String(verified.user_id) };
}
