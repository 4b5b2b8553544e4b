// Container health check: exits 0 when GET <url> answers 2xx within 2 s, else 1. The slim and CUDA
// base images carry neither curl nor wget, and Node is already there.
const url = process.argv[2];
if (!url) {
  process.stderr.write('usage: node healthcheck.mjs URL\n');
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
