/**
 * secretlint's recommended preset as a rule set of the scanner (docs/decisions/0034-a-look-before-publishing.md).
 * Loaded on the first write that is scanned (scan/scanner.ts imports the engine dynamically), never at start-up.
 *
 * The preset's rules run here with a small runner of our own rather than through `@secretlint/core`: the core marks
 * every rule's start and end on Node's performance timeline and keeps every mark and measure for the life of the
 * process, searching them all on each mark, so in a long-running service each scan cost more than the one before
 * (measured: 15-50 ms of CPU per 100 KB create, and growing, against about 3 ms with this runner). A rule is an
 * object whose `create(context, options)` returns `{ file(source) }` and reports `{ message, range }` through the
 * context; that contract is all this module relies on.
 *
 * Left out on purpose: the preset's comment filter (a `secretlint-disable` comment must not turn a document's own
 * look off). A connection string whose password is a placeholder is not reported. (AWS access key ids are found by
 * secrets.ts: the preset's option for them also reports "account: 1234-5678-9012", which is no secret, and costs a
 * third of the preset's time on ordinary documents.)
 */
import { rules as presetRules } from '@secretlint/secretlint-rule-preset-recommend';
import { literalFinder } from './literals.js';
import type { Match } from './mask.js';
import { hasRealPassword } from './secrets.js';

/** What the runner uses of a secretlint rule (the `SecretLintRuleCreator` contract of `@secretlint/types`). */
interface Rule {
  readonly meta: { readonly id: string; readonly supportedContentTypes: readonly string[] };
  readonly messages: Readonly<Record<string, unknown>>;
  create(context: RuleContext, options: object): { file?(source: Source): unknown };
}

interface Report {
  readonly message: { readonly messageId: string };
  readonly range: readonly [number, number];
}

interface RuleContext {
  readonly sharedOptions: object;
  createTranslator(messages: Readonly<Record<string, unknown>>): (messageId: string, data?: object) => object;
  report(report: Report): void;
  ignore(): void;
}

/** The source a rule reads: always an HTML document held in memory (a rule that reads files from disk never does). */
interface Source {
  readonly content: string;
  readonly filePath: string;
  readonly ext: string;
  readonly contentType: 'text';
}

const RULE_PREFIX = '@secretlint/secretlint-rule-';
const SKIPPED = new Set([`${RULE_PREFIX}filter-comments`]);

/** Each of `firsts` followed by each of `rests`: the literals of a pattern that begins with alternatives. */
const each = (firsts: readonly string[], ...rests: ReadonlyArray<readonly string[]>): string[] =>
  rests.reduce<string[]>((heads, rest) => heads.flatMap((head) => rest.map((tail) => head + tail)), [...firsts]);

/** A rule's trigger that literals alone do not decide: given the text and which of the looked-for literals it holds. */
type Check = (text: string, present: ReadonlySet<string>) => boolean;

/** Slack's tokens as the rule writes them (`xoxb-` and the like, case as written). */
const SLACK_TOKENS = [...each(['xox'], ['b', 'p', 'a', 'o', 'r'], ['-']), 'xapp-'];

/**
 * What a text must contain for a rule to find anything: literals of which every match of the rule's patterns holds
 * one (read from the preset's source, version 12.0.0), or for the rules whose patterns are URLs, a check at each `://`
 * of the text. A rule not named here runs on every text, so a rule an upgrade adds is never skipped. Most ordinary
 * documents contain none of these, and the rules they would run for nothing are most of the preset's cost. The
 * accuracy corpus (bench/scan-corpus.mjs) has a case of every gated rule.
 */
const TRIGGERS: Readonly<Record<string, readonly string[] | Check>> = {
  '1password': ['ops_ey'],
  anthropic: ['sk-ant-api0'],
  // `(SECRET|secret|Secret)_?(ACCESS|access|Access)_?(KEY|key|Key)`, as the rule writes it.
  aws: each(['SECRET', 'secret', 'Secret'], ['', '_'], ['ACCESS', 'access', 'Access']),
  // `mongodb(+srv)://`, `(jdbc:)mysql(x)://`, `postgres(ql)://`, in any case.
  'database-connection-string': (text) =>
    atAnyUrl(text, (at) =>
      /(?:mongodb(?:\+srv)?|mysqlx?|postgres(?:ql)?)$/i.test(text.slice(Math.max(0, at - 16), at)),
    ),
  databricks: ['dapi'],
  docker: ['dckr_pat_'],
  figma: ['figd_'],
  github: [...each(['gh'], ['p', 'o', 'u', 's', 'r'], ['_']), 'github_pat_'],
  gitlab: ['glpat-'],
  grafana: ['glc_', 'glsa_'],
  groq: ['gsk_'],
  'hashicorp-vault': each(['hv'], ['s', 'b', 'r'], ['.']),
  huggingface: ['hf_'],
  linear: ['lin_api_'],
  notion: ['ntn_'],
  npm: ['npm_'],
  openai: ['T3BlbkFJ'],
  privatekey: ['PRIVATE KEY'],
  sendgrid: ['SG.'],
  shopify: each(['shp'], ['pa', 'ca', 'at', 'ss'], ['_']),
  // Tokens, and incoming webhooks: `https://hooks.slack.com/…` in any case.
  slack: (text, present) =>
    SLACK_TOKENS.some((token) => present.has(token)) ||
    atAnyUrl(text, (at) => /^hooks\.slack\.com/i.test(text.slice(at + 3, at + 64))),
  vercel: each(['vc'], ['p', 'c', 'i', 'a', 'r', 'k'], ['_']),
};

/** Whether `test` holds at one of the text's `://` (given its offset). */
function atAnyUrl(text: string, test: (at: number) => boolean): boolean {
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) if (test(at)) return true;
  return false;
}

/** Every literal trigger, looked for in one go (literals.ts). */
const LITERALS = literalFinder([
  ...Object.values(TRIGGERS).flatMap((trigger) => (typeof trigger === 'function' ? [] : trigger)),
  ...SLACK_TOKENS,
]);

/** The names of the gated rules whose trigger the text holds. */
function triggered(text: string): Set<string> {
  const names = new Set<string>();
  const present = LITERALS(text);
  for (const [name, trigger] of Object.entries(TRIGGERS)) {
    const holds = typeof trigger === 'function' ? trigger(text, present) : trigger.some((l) => present.has(l));
    if (holds) names.add(name);
  }
  return names;
}

/** Messages whose match is a URL with credentials, where a placeholder password is no finding. */
const URL_MESSAGES = new Set(['BasicAuth', 'PostgreSQLConnection', 'MySQLConnection', 'MongoDBConnection']);

const RULES = (presetRules as readonly Rule[]).filter(
  (rule) =>
    !SKIPPED.has(rule.meta.id) &&
    (rule.meta.supportedContentTypes.includes('text') || rule.meta.supportedContentTypes.includes('all')),
);

/** secretlint's translator, reduced to what reports need: the message id (the text itself is never used). */
const translator = () => (messageId: string, data?: object) => ({ messageId, data });

/** Where a URL found at `start` ends: at `end`, or before the first quote, bracket or backtick. */
function endOfUrl(text: string, start: number, end: number): number {
  const cut = text.slice(start, end).search(/[<>"'`]/);
  return cut === -1 ? end : start + cut;
}

/** The runner: each rule over the text, its reports kept as matches named `<rule>/<message id>`. */
async function runRule(rule: Rule, source: Source, gated: ReadonlySet<string>, found: Match[]): Promise<void> {
  const name = rule.meta.id.startsWith(RULE_PREFIX) ? rule.meta.id.slice(RULE_PREFIX.length) : rule.meta.id;
  if (name in TRIGGERS && !gated.has(name)) return;
  const context: RuleContext = {
    sharedOptions: {},
    createTranslator: translator,
    report({ message, range }) {
      const id = message.messageId;
      const [start, whole] = range;
      // In HTML a URL ends at the markup around it (the preset's patterns run on to the next space).
      const end = URL_MESSAGES.has(id) ? endOfUrl(source.content, start, whole) : whole;
      if (URL_MESSAGES.has(id) && !hasRealPassword(source.content.slice(start, end))) return;
      found.push({ start, end, rule: `${name}/${id}`, kind: 'secret' });
    },
    ignore() {},
  };
  await rule.create(context, {}).file?.(source);
}

/** Every match of the preset's rules in `text`, named `<rule>/<message id>` (e.g. `aws/AWSSecretAccessKey`). */
export async function findWithSecretlint(text: string): Promise<Match[]> {
  const source: Source = { content: text, filePath: 'document.html', ext: '.html', contentType: 'text' };
  const found: Match[] = [];
  const gated = triggered(text);
  for (const rule of RULES) await runRule(rule, source, gated, found);
  return found;
}
