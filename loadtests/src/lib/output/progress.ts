/**
 * Progress of a sweep on stderr: on a terminal, one bar redrawn in place (repeats of a status are
 * throttled, so a fast loop does not spend its time repainting); in CI or when stderr is piped, plain lines, one per event,
 * which read well in a log. `line` always prints a permanent line (the bar is redrawn below it).
 */

export interface Progress {
  /** `fraction` of the whole run done (0..1) and what is happening now. */
  update(fraction: number, status: string): void;
  line(message: string): void;
  done(): void;
}

export interface ProgressOptions {
  readonly interactive: boolean;
  readonly write?: (text: string) => void;
  readonly width?: number;
}

export function isInteractive(stream: { isTTY?: boolean } = process.stderr, env = process.env): boolean {
  return stream.isTTY === true && env.CI === undefined && env.TERM !== 'dumb';
}

export function progressBar(fraction: number, width: number): string {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const filled = Math.round(clamped * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(clamped * 100)).padStart(3)}%`;
}

export function createProgress(options: ProgressOptions): Progress {
  const write = options.write ?? ((text: string) => void process.stderr.write(text));
  const width = options.width ?? 30;
  let lastStatus = '';
  let lastDraw = 0;
  let shown = false;
  let current = '';
  const clear = (): void => {
    if (shown) write('\r\x1b[2K');
    shown = false;
  };
  const draw = (): void => {
    write(`\r\x1b[2K${current}`);
    shown = true;
    lastDraw = performance.now();
  };
  return {
    update(fraction, status) {
      if (options.interactive) {
        current = `${progressBar(fraction, width)} ${status}`;
        // A new status is always shown; repeats of one only as often as is worth repainting.
        if (status !== lastStatus || performance.now() - lastDraw >= 100) draw();
      } else if (status !== lastStatus) {
        write(`[${String(Math.round(Math.min(1, Math.max(0, fraction || 0)) * 100)).padStart(3)}%] ${status}\n`);
      }
      lastStatus = status;
    },
    line(message) {
      clear();
      write(`${message}\n`);
      if (options.interactive && current !== '') draw();
    },
    done() {
      clear();
      current = '';
    },
  };
}
