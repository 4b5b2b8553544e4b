/** Prometheus configuration and rules, checked and unit-tested with promtool. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { alertNames, loadRules, ruleFiles } from './support/observability.js';
import { INFRA, run } from './support/tools.js';

const PROMETHEUS = path.join(INFRA, 'prometheus');

describe('prometheus rules', () => {
  it('promtool check config accepts the scrape configuration and the rule files it loads', () => {
    // promtool insists that the gateway's credentials file (a compose secret, /run/secrets/...) exists:
    // the check runs on a copy beside the rules with the path pointed at a stand-in file.
    const dir = mkdtempSync(path.join(PROMETHEUS, '.check-'));
    try {
      const secret = path.join(dir, 'tessera_admin_key');
      writeFileSync(secret, 'stand-in\n');
      const text = readFileSync(path.join(PROMETHEUS, 'prometheus.yml'), 'utf8');
      expect(text).toContain('credentials_file: /run/secrets/tessera_admin_key');
      writeFileSync(path.join(PROMETHEUS, `${path.basename(dir)}.yml`), text.replace('/run/secrets/tessera_admin_key', secret));
      const result = run('promtool', ['check', 'config', path.join(PROMETHEUS, `${path.basename(dir)}.yml`)]);
      expect(result.status, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain(`${ruleFiles().length} rule files found`);
    } finally {
      rmSync(path.join(PROMETHEUS, `${path.basename(dir)}.yml`), { force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('promtool check rules accepts every rule file', () => {
    const result = run('promtool', ['check', 'rules', ...ruleFiles()]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });

  it('promtool test rules passes the unit tests of every alert and the recording rules', () => {
    const tests = readdirSync(path.join(PROMETHEUS, 'tests')).filter((f) => f.endsWith('.test.yml')).map((f) => path.join(PROMETHEUS, 'tests', f));
    expect(tests.length).toBeGreaterThanOrEqual(2);
    const result = run('promtool', ['test', 'rules', ...tests]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });

  it('has the alerts the runbook names, each with a unit test that fires it', () => {
    const alerts = alertNames(loadRules());
    const required = ['TesseraNodeQueueTimeHigh', 'TesseraGatewayQueueWaitHigh', 'TesseraRejectionRateHigh', 'TesseraBreakerOpen', 'TesseraCacheHitRatioDrop', 'TesseraNodeMissing', 'TesseraRedisDown'];
    expect([...alerts]).toEqual(expect.arrayContaining(required));
    const tested = run('sh', ['-c', `grep -ho 'alertname: [A-Za-z]*' ${path.join(PROMETHEUS, 'tests')}/*.test.yml`]).stdout;
    for (const alert of alerts) expect(tested, `no promtool test for ${alert}`).toContain(`alertname: ${alert}`);
  });
});
