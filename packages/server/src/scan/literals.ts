/**
 * Which of a fixed set of literals a text holds, with few passes over it (docs/decisions/0043-a-create-s-cost-where-it-goes.md):
 * the scanner runs a rule only on a text that holds one of its literals (secretlint.ts, secrets.ts), and most texts
 * hold none, so this look is most of the scan's time on an ordinary document.
 *
 * `String.prototype.includes` finds a literal quickly when its first character is rare in the text (V8 looks for that
 * character with a memory scan, then compares): about 4 µs over a 100 KB report for `AKIA` or `_v1_`, but 20-70 µs for
 * `hf_`, `sk-ant-api0` or `dapi`, whose first letters are everywhere. So each literal is looked for from its rarest
 * character (by how often each appears in documents: an underscore and capitals are rare, `t` and `<` everywhere),
 * and the literals that share that character share one pass over its occurrences. A text with no
 * underscore rules out every underscore literal in one scan.
 */

/**
 * Lower-case letters from the most to the least frequent in the documents the scanner sees, with their share per
 * thousand characters: measured over the accuracy corpus's 300 ordinary documents and 20 reports of bench:write
 * (markup, styles, scripts, tables of numbers), where `t` and `d` lead (`<td>`).
 */
const LETTERS = 'tdeascnrulmoipfbghyvkwxqzj';
const LETTER_SHARES = [61, 54, 26, 25, 25, 24, 21, 20, 18, 15, 15, 13, 13, 11, 11, 10, 8, 7, 7, 6, 6, 6, 5, 5, 4, 4];

/** About how many of a thousand characters of a document are `char`: lower is rarer, a better place to look from. */
function commonness(char: string): number {
  const letter = LETTERS.indexOf(char);
  if (letter !== -1) return LETTER_SHARES[letter] as number;
  if (char === '_') return 1;
  if (char >= 'A' && char <= 'Z') return 5;
  if (char >= '0' && char <= '9') return 20;
  switch (char) {
    case '<':
    case '>':
      return 48;
    case '"':
      return 35;
    case '/':
      return 27;
    case ' ':
      return 20;
    case '.':
    case '-':
    case ',':
      return 9;
    case ':':
    case '=':
      return 7;
    default:
      return 3;
  }
}

/** A literal, and where in it its rarest character stands. */
interface Entry {
  readonly literal: string;
  readonly at: number;
}

/** Up to this many occurrences of a shared character are checked against each of its literals. */
const FEW = 64;

/**
 * The longest piece of a literal handed to V8's search: up to 6 characters it scans memory for the piece's first
 * character and compares from there; from 7 on it switches to a Boyer-Moore-Horspool search keyed on the piece's last
 * character, which over a table of numbers was ten times slower for `k-ant-api0` (about 50 µs against 4 µs per 100 KB).
 */
const PIECE = 6;

/** Whether `text` holds the literal, looked for from its rarest character (V8 finds each with a memory scan). */
function holds(text: string, { literal, at }: Entry): boolean {
  const piece = literal.slice(at, at + PIECE);
  if (at === 0 && piece.length === literal.length) return text.includes(literal);
  for (let i = text.indexOf(piece); i !== -1; i = text.indexOf(piece, i + 1)) {
    if (text.startsWith(literal, i - at)) return true;
  }
  return false;
}

/** Finds which of `literals` a text holds (case-sensitive). */
export type LiteralFinder = (text: string) => Set<string>;

export function literalFinder(literals: Iterable<string>): LiteralFinder {
  const groups = new Map<string, Entry[]>();
  for (const literal of new Set(literals)) {
    if (literal.length === 0) throw new Error('a literal to look for must not be empty');
    let at = 0;
    for (let i = 1; i < literal.length; i++) {
      if (commonness(literal[i] as string) < commonness(literal[at] as string)) at = i;
    }
    const char = literal[at] as string;
    const group = groups.get(char) ?? [];
    group.push({ literal, at });
    groups.set(char, group);
  }
  const passes = [...groups].map(([char, entries]) => ({ char, entries }));
  return (text) => {
    const found = new Set<string>();
    for (const { char, entries } of passes) {
      if (entries.length === 1) {
        const entry = entries[0] as Entry;
        if (holds(text, entry)) found.add(entry.literal);
        continue;
      }
      // Literals sharing a character: its occurrences, when there are few (none rules them all out in one scan),
      // are checked against each; otherwise each literal is looked for on its own.
      const positions: number[] = [];
      let i = text.indexOf(char);
      for (; i !== -1 && positions.length < FEW; i = text.indexOf(char, i + 1)) positions.push(i);
      for (const entry of entries) {
        const present =
          i === -1
            ? positions.some((position) => text.startsWith(entry.literal, position - entry.at))
            : holds(text, entry);
        if (present) found.add(entry.literal);
      }
    }
    return found;
  };
}
