/**
 * axe-core in a real page: injected as a script (the page's context must be created with `bypassCSP: true`, since
 * the service's pages allow only their own nonce), run on the whole document, violations returned in a form that
 * says what to fix. The page's side runs from strings, which keeps DOM types out of this Node-only project.
 */
import axe from 'axe-core';
import type { Page } from 'playwright-core';

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly helpUrl: string;
  readonly nodes: readonly { readonly target: readonly unknown[]; readonly failureSummary?: string }[];
}

/** Every violation axe reports on the page as it is now (all rules axe enables by default). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"'))) {
    await page.addScriptTag({ content: axe.source });
  }
  return page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })))`);
}

/** Only what blocks or seriously hinders someone: impact `serious` or `critical`. */
export const blocking = (violations: readonly AxeViolation[]) =>
  violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');

/** One line per violation and one per element, to be fixed from the report alone. */
export function describeViolations(where: string, violations: readonly AxeViolation[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes.map(
        (n) => `    ${JSON.stringify(n.target)}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`,
      );
      return `${where}: [${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})\n${nodes.join('\n')}`;
    })
    .join('\n');
}
