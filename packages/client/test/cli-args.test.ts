/** The command line's argument reading (src/cli/args.ts): values that begin with a dash. */
import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../src/cli/args.js';

const options = {
  'poll-token': { type: 'string' },
  label: { type: 'string' },
  project: { type: 'boolean' },
  open: { type: 'boolean', short: 'o' },
} as const;

describe('parseCommandArgs', () => {
  it('reads a string value that begins with a dash (a random poll token can)', () => {
    const { values } = parseCommandArgs('login', ['--poll-token', '-Ab_9', '--project'], options);
    expect(values['poll-token']).toBe('-Ab_9');
    expect(values.project).toBe(true);
  });

  it('still takes a following option as an option, not as the value', () => {
    expect(() => parseCommandArgs('login', ['--label', '--project'], options)).toThrow(/ambiguous/);
    expect(() => parseCommandArgs('login', ['--label', '-o'], options)).toThrow(/ambiguous/);
  });

  it('leaves everything after -- alone', () => {
    const { positionals } = parseCommandArgs('login', ['--', '--label', '-x'], options);
    expect(positionals).toEqual(['--label', '-x']);
  });
});
