/**
 * One validation finding: the config field it is about and Triton's reason. Validators collect these so
 * a caller can report the first (like Triton) or all of them.
 */
import { TesseraError } from '../errors/index.js';

export interface ConfigIssue {
  /** Dotted path of the offending field, e.g. `input[0].dims` or `dynamic_batching.preferred_batch_size`. */
  readonly field: string;
  readonly reason: string;
}

export class IssueList {
  readonly issues: ConfigIssue[] = [];
  add(field: string, reason: string): void {
    this.issues.push({ field, reason });
  }
}

/** The INVALID_ARG error for a list of issues (first only unless `all`), naming the file and field. */
export function issuesToError(fileName: string, issues: readonly ConfigIssue[], all: boolean): TesseraError {
  const shown = all ? issues : issues.slice(0, 1);
  const text = shown.map((issue) => `${issue.field}: ${issue.reason}`).join('; ');
  const more = !all && issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return TesseraError.invalidArg(`invalid model configuration ${fileName}: ${text}${more}`);
}
