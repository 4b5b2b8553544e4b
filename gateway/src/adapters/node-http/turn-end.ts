/**
 * The end of an event-loop turn, in two stages: answers first, then what may wait for them (the
 * access log). One setImmediate per turn runs both.
 *
 * Why: a request's access line is made before its answer is handed to the end-of-turn writer, so a
 * log batch that the line made due (8 KiB) was written there and then, a write(2) of 0.1-0.9 ms ahead
 * of that request's answer. Here a due batch leaves in one write right after the turn's answers.
 */
export type Task = () => void;

export class TurnEnd {
  private answers: Task[] = [];
  private afterAnswers: Task[] = [];
  private scheduled = false;

  constructor(
    /** Runs the turn's tasks; setImmediate unless a test drives it. */
    private readonly endOfTurn: (run: () => void) => void = setImmediate,
  ) {}

  /** Runs `task` at the end of this turn, before anything queued with `afterAnswer`. */
  answer(task: Task): void {
    this.answers.push(task);
    this.schedule();
  }

  /** Runs `task` at the end of this turn, after this turn's answers (even if one of them threw). */
  afterAnswer(task: Task): void {
    this.afterAnswers.push(task);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.endOfTurn(() => this.run());
  }

  private run(): void {
    this.scheduled = false;
    const answers = this.answers;
    const after = this.afterAnswers;
    this.answers = [];
    this.afterAnswers = [];
    try {
      for (const task of answers) task();
    } finally {
      for (const task of after) task();
    }
  }
}

/** The process's turn: the fast path's answers and the access log share it (entry-node.ts). */
export const processTurnEnd = new TurnEnd();
