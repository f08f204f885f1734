/**
 * What the command line prints. Human output on a terminal, JSON when stdout is not a terminal (`--json` / `--human`
 * force either); progress, notes and warnings always on stderr, so stdout stays parseable.
 */
import type { Io } from './context.js';

/** The result of a command on stdout (JSON or human text), and notes and warnings on stderr. */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly io: Io,
  ) {}

  /** The command's result: one JSON document, or human text, on stdout. */
  result(value: unknown, human: () => string): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else {
      const text = human();
      if (text !== '') this.io.stdout.write(`${text}\n`);
    }
  }

  /** Progress and explanations for the human: stderr, in both modes, so stdout stays parseable. */
  note(message: string): void {
    this.io.stderr.write(`${message}\n`);
  }

  /** A warning line on stderr, `htmldrop: warning: ...`. */
  warn(message: string): void {
    this.io.stderr.write(`htmldrop: warning: ${message}\n`);
  }
}

/** A countdown on stderr: rewritten in place on a terminal, a line every 30 s otherwise. Returns its stop. */
export function startCountdown(stderr: NodeJS.WriteStream, expiresAt: number): () => void {
  const left = () => Math.max(0, Math.ceil((expiresAt - Date.now()) / 1000));
  const clock = (s: number) => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  if (stderr.isTTY) {
    const draw = () => stderr.write(`\r\x1b[KWaiting for approval... ${clock(left())} left (Ctrl-C to cancel)`);
    draw();
    const timer = setInterval(draw, 1000);
    return () => {
      clearInterval(timer);
      stderr.write('\r\x1b[K');
    };
  }
  stderr.write(`Waiting for approval... ${left()} s left\n`);
  const timer = setInterval(() => stderr.write(`Waiting for approval... ${left()} s left\n`), 30_000);
  return () => clearInterval(timer);
}
