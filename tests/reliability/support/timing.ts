/**
 * Hang detection for the reliability suites: a bound on how long something may take before the test
 * calls it a hang. This is not a performance assertion: the bounds are many times the expected time.
 */
export async function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms (a hang): ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
