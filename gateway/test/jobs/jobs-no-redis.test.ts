/** Without a job queue (no Redis): job routes answer 503, and `Prefer: respond-async` is ignored. */
import { describe, expect, it } from 'vitest';
import { KEYS, simpleInferBody, testGateway } from '../app-fixtures.js';

describe('async jobs without Redis', () => {
  it('answers 503 "async jobs need Redis" on job routes, after authentication', async () => {
    const { gateway } = await testGateway();
    const post = await gateway.fetch(
      new Request('http://gw/v1/jobs?model=simple', { method: 'POST', body: simpleInferBody(), headers: { authorization: `Bearer ${KEYS.a}` } }),
    );
    expect(post.status).toBe(503);
    expect(((await post.json()) as { error: string }).error).toMatch(/async jobs need Redis/);
    const get = await gateway.fetch(new Request('http://gw/v1/jobs/j0123456789abcdef0123456789abcdef', { headers: { authorization: `Bearer ${KEYS.a}` } }));
    expect(get.status).toBe(503);
    expect((await gateway.fetch(new Request('http://gw/v1/jobs?model=simple', { method: 'POST', body: simpleInferBody() }))).status).toBe(401);
  });

  it('serves an infer request with Prefer: respond-async synchronously (a preference may be ignored)', async () => {
    const { gateway } = await testGateway();
    const res = await gateway.fetch(
      new Request('http://gw/v2/models/simple/infer', { method: 'POST', body: simpleInferBody(), headers: { authorization: `Bearer ${KEYS.a}`, prefer: 'respond-async' } }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBeNull();
  });
});
