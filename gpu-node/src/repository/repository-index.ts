/** One line of the repository index (Triton's repository extension): a model, or one of its versions. */
import type { ModelState } from '../lifecycle/model-state.js';

export interface RepositoryIndexEntry {
  readonly name: string;
  /** Omitted for models that were never loaded. */
  readonly version?: string;
  readonly state?: ModelState;
  readonly reason?: string;
}
