/**
 * secretlint's recommended preset as a rule set of the scanner (docs/decisions/0034-a-look-before-publishing.md).
 * Loaded on the first write that is scanned (scan/scanner.ts imports this module dynamically), never at start-up.
 * Its `secretlint-disable` comment directives are switched off (a document must not turn its own look off), AWS
 * access key ids are looked for too, and a connection string whose password is a placeholder is not reported.
 */
import { lintSource } from '@secretlint/core';
import { rules as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import type { Match } from './mask.js';
import { hasRealPassword } from './secrets.js';

const RULE_PREFIX = '@secretlint/secretlint-rule-';

/**
 * The preset's rules, each registered on its own: secretlint ignores `disabled` on a rule inside a preset, so the
 * comment filter is left out here rather than switched off there.
 */
const CONFIG = {
  rules: recommended
    .filter((rule) => rule.meta.id !== `${RULE_PREFIX}filter-comments`)
    .map((rule) =>
      rule.meta.id === `${RULE_PREFIX}aws`
        ? // Access key ids (AKIA…) as well as secret keys; "account: 1234-5678-9012" is no secret.
          { id: rule.meta.id, rule, options: { enableIDScanRule: true }, allowMessageIds: ['AWSAccountID'] }
        : { id: rule.meta.id, rule },
    ),
};

/** Messages whose match is a URL with credentials, where a placeholder password is no finding. */
const URL_MESSAGES = new Set(['BasicAuth', 'PostgreSQLConnection', 'MySQLConnection', 'MongoDBConnection']);

/** Where a URL found at `start` ends: at `end`, or before the first quote, bracket or backtick. */
function endOfUrl(text: string, start: number, end: number): number {
  const cut = text.slice(start, end).search(/[<>"'`]/);
  return cut === -1 ? end : start + cut;
}

/** Every match of the preset's rules in `text`, named `<rule>/<message id>` (e.g. `aws/AWSSecretAccessKey`). */
export async function findWithSecretlint(text: string): Promise<Match[]> {
  const result = await lintSource({
    source: { filePath: 'document', content: text, contentType: 'text', ext: '' },
    options: { config: CONFIG, maskSecrets: true, noPhysicFilePath: true },
  });
  const found: Match[] = [];
  for (const message of result.messages) {
    const [start, whole] = message.range;
    const id = message.messageId ?? 'found';
    // In HTML a URL ends at the markup around it (the preset's patterns run on to the next space).
    const end = URL_MESSAGES.has(id) ? endOfUrl(text, start, whole) : whole;
    if (URL_MESSAGES.has(id) && !hasRealPassword(text.slice(start, end))) continue;
    const rule = message.ruleId.startsWith(RULE_PREFIX) ? message.ruleId.slice(RULE_PREFIX.length) : message.ruleId;
    found.push({ start, end, rule: `${rule}/${id}`, kind: 'secret' });
  }
  return found;
}
