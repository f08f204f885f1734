/** What a call that must fail failed with: the SDK's error, or the test fails. */
import { HtmlDropError } from '../src/errors.js';

export async function failure(promise: Promise<unknown>): Promise<HtmlDropError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HtmlDropError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}
