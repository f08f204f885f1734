/** `htmldrop passcode`: set, change or remove the passcode of a drop (docs/api.md section 4.3). */
import { readTextSource } from '../../source.js';
import { bool, positional, usage } from '../args.js';
import type { Command } from '../context.js';

/** `htmldrop passcode`. */
export const passcode: Command = {
  usage: 'passcode <slug> (<value> | - | --remove)',
  summary: 'Set, change or remove the passcode of a drop',
  help: `Sets the passcode (at least 4 characters; "-" reads it from stdin, keeping it out of the process list), or
removes it with --remove. A passcode is a soft share gate, not encryption.`,
  options: { remove: { type: 'boolean' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'passcode');
    const remove = bool(values, 'remove');
    let value = args[1];
    if (remove && value !== undefined) throw usage('passcode: give a value or --remove, not both.');
    if (!remove && value === undefined) throw usage('passcode: give a value, "-" to read it from stdin, or --remove.');
    if (value === '-')
      value = (await readTextSource('-', { stdin: ctx.io.stdin, what: 'a passcode' })).text.split(/\r?\n/)[0] ?? '';
    const { client } = await ctx.authenticated();
    const drop = await client.setPasscode(slug, remove ? '' : (value ?? ''));
    ctx.out.result(drop, () => (drop.locked ? `Passcode set on ${slug}.` : `Passcode removed from ${slug}.`));
  },
};
