/**
 * The work of many sessions sharing one thread, taken in turns: each session keeps its own FIFO (its
 * open, batches and release stay in order), and `next()` takes one task from the session whose turn it
 * is, then sends that session to the back of the line. A session with a slow model therefore delays the
 * others by at most one of its tasks per round, however many batches it has waiting.
 */
export class FairQueue<Key, Task> {
  private readonly queues = new Map<Key, Task[]>();
  /** Sessions with tasks waiting, in turn order; each appears once. */
  private turns: Key[] = [];
  private head = 0;

  push(key: Key, task: Task): void {
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = [];
      this.queues.set(key, queue);
      this.turns.push(key);
    }
    queue.push(task);
  }

  next(): Task | undefined {
    if (this.head >= this.turns.length) return undefined;
    const key = this.turns[this.head++] as Key;
    const queue = this.queues.get(key) as Task[];
    const task = queue.shift() as Task;
    if (queue.length > 0) this.turns.push(key);
    else this.queues.delete(key);
    // Compact now and then so the line does not grow without bound.
    if (this.head > 64 && this.head * 2 > this.turns.length) {
      this.turns = this.turns.slice(this.head);
      this.head = 0;
    }
    return task;
  }

  get isEmpty(): boolean {
    return this.head >= this.turns.length;
  }

  get size(): number {
    let total = 0;
    for (const queue of this.queues.values()) total += queue.length;
    return total;
  }
}
