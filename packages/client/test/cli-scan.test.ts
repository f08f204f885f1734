/**
 * Secrets and personal data (docs/api.md, "A look before publishing") through the CLI and the SDK, against the real
 * service: warnings on stderr and in the result, --block (exit 8) publishing nothing, the SDK's `scan: 'block'`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client.js';
import { HtmlDropError } from '../src/errors.js';
import { EXIT } from '../src/exit-codes.js';
import type { Drop, DropList } from '../src/types.js';
import { PAGE, run, runJson, type Sandbox, write } from './run.js';
import { useService } from './service.js';

const service = useService();

// Built at run time, so that no scanner of this repository finds it in its source.
const AWS_KEY = ['AKIA', 'Z3MSJV4WWNKWW5FG'].join('');
/** The key on line 3 of the document. */
const LEAKY = `<!doctype html>\n<html><head><title>Costs</title></head><body>\n<pre>AWS_ACCESS_KEY_ID=${AWS_KEY}</pre>\n</body></html>\n`;
const FINDING = /^ {2}html line 3: secret \(htmldrop\/aws-access-key-id\): AKIA\*+W5FG$/m;

describe('the look before publishing', () => {
  let box: Sandbox & { token: string };
  beforeAll(async () => {
    box = await service.signedIn('scanner');
  });
  const count = async () => (await runJson<DropList>(box, ['list'])).json.data.length;

  it('publish warns on stderr naming the rule and line, and the result carries drop.warnings; never the key', async () => {
    const file = write(box.cwd, 'costs.html', LEAKY);
    const out = await runJson<{ drop: Drop }>(box, ['publish', file]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain('htmldrop: warning: version 1 looks like it carries secrets or personal data');
    expect(out.stderr).toMatch(FINDING);
    expect(out.json.drop.warnings).toEqual([
      { kind: 'secret', rule: 'htmldrop/aws-access-key-id', where: 'html', line: 3, excerpt: 'AKIA************W5FG' },
    ]);
    expect(out.stderr + out.stdout).not.toContain(AWS_KEY);
    const clean = await runJson<{ drop: Drop }>(box, ['publish', write(box.cwd, 'ok.html', PAGE('fine'))]);
    expect(clean.stderr).toBe('');
    expect(clean.json.drop).not.toHaveProperty('warnings');
  });

  it('publish --block and update --block publish nothing: exit 8, the findings on stderr', async () => {
    const file = write(box.cwd, 'costs2.html', LEAKY);
    const before = await count();
    const refused = await run(box, ['publish', file, '--block', '--human']);
    expect(refused.code).toBe(EXIT.sensitive);
    expect(refused.stderr).toContain('[sensitive_content]');
    expect(refused.stderr).toMatch(/^htmldrop: {3}html line 3: secret \(htmldrop\/aws-access-key-id\): AKIA\*+W5FG$/m);
    expect(refused.stderr + refused.stdout).not.toContain(AWS_KEY);
    expect(await count()).toBe(before);
    const { json } = await runJson<{ drop: Drop }>(box, ['publish', write(box.cwd, 'base.html', PAGE('base'))]);
    const update = await run(box, ['update', json.drop.slug, file, '--block']);
    expect(update.code).toBe(EXIT.sensitive);
    const shown = await runJson<Drop>(box, ['show', json.drop.slug]);
    expect(shown.json.latest_version).toBe(1);
    // update without --block publishes and warns, also when a PATCH follows the upload.
    const warned = await runJson<{ drop: Drop }>(box, ['update', json.drop.slug, file, '--comments', 'off']);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toMatch(FINDING);
    expect(warned.json.drop.warnings?.map((w) => w.rule)).toEqual(['htmldrop/aws-access-key-id']);
  });

  it('the SDK returns the warnings, and scan: block fails with sensitive_content and its findings', async () => {
    const client = createClient({ server: service.baseUrl, token: box.token });
    const drop = await client.createDrop({ title: 'SDK', html: LEAKY });
    expect(drop.warnings?.map((w) => [w.rule, w.line])).toEqual([['htmldrop/aws-access-key-id', 3]]);
    const error = await client.createDrop({ title: 'SDK', html: LEAKY, scan: 'block' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HtmlDropError);
    expect((error as HtmlDropError).code).toBe('sensitive_content');
    expect((error as HtmlDropError).status).toBe(422);
    expect((error as HtmlDropError).details?.findings).toEqual(drop.warnings);
    const put = await client.updateDrop(drop.slug, { html: LEAKY, scan: 'block' }).catch((e: unknown) => e);
    expect((put as HtmlDropError).code).toBe('sensitive_content');
  });
});
