/**
 * secretlint's recommended preset as a rule set of the scanner (docs/decisions/0034-a-look-before-publishing.md).
 * Loaded on the first write that is scanned (scan/scanner.ts imports this module dynamically), never at start-up.
 * Its `secretlint-disable` comment directives are switched off (a document must not turn its own look off), AWS
 * access key ids are looked for too, and a connection string whose password is a placeholder is not reported.
 */
import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import type { Match } from './mask.js';
import { hasRealPassword } from './secrets.js';

const PRESET = '@secretlint/secretlint-rule-preset-recommend';
const RULE_PREFIX = '@secretlint/secretlint-rule-';

const CONFIG = {
  rules: [
    {
      id: PRESET,
      rule: recommended,
      rules: [
        { id: '@secretlint/secretlint-rule-filter-comments', disabled: true },
        // Access key ids (AKIA…) as well as secret keys; "account: 1234-5678-9012" is no secret.
        {
          id: '@secretlint/secretlint-rule-aws',
          options: { enableIDScanRule: true },
          allowMessageIds: ['AWSAccountID'],
        },
      ],
    },
  ],
};

/** Messages whose match is a URL with credentials, where a placeholder password is no finding. */
const URL_MESSAGES = new Set(['BasicAuth', 'PostgreSQLConnection', 'MySQLConnection', 'MongoDBConnection']);

/** Every match of the preset's rules in `text`, named `<rule>/<message id>` (e.g. `aws/AWSSecretAccessKey`). */
export async function findWithSecretlint(text: string): Promise<Match[]> {
  const result = await lintSource({
    source: { filePath: 'document', content: text, contentType: 'text', ext: '' },
    options: { config: CONFIG, maskSecrets: true, noPhysicFilePath: true },
  });
  const found: Match[] = [];
  for (const message of result.messages) {
    const [start, end] = message.range;
    const id = message.messageId ?? 'found';
    if (URL_MESSAGES.has(id) && !hasRealPassword(text.slice(start, end))) continue;
    const rule = message.ruleId.startsWith(RULE_PREFIX) ? message.ruleId.slice(RULE_PREFIX.length) : message.ruleId;
    found.push({ start, end, rule: `${rule}/${id}`, kind: 'secret' });
  }
  return found;
}
