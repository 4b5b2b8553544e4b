// Container health check: exits 0 when GET <url> answers 2xx within the timeout (2 s unless a second argument
// gives milliseconds), else 1. The slim and CUDA base images carry neither curl nor wget, and Node is already there.
const url = process.argv[2];
const timeoutMs = process.argv[3] === undefined ? 2000 : Number(process.argv[3]);
if (!url || !Number.isInteger(timeoutMs) || timeoutMs <= 0) {
  process.stderr.write('usage: node healthcheck.mjs URL [TIMEOUT_MS]\n');
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
