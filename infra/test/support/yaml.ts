/**
 * YAML → JSON through python3's PyYAML. The repository has no YAML library of its own, and PyYAML
 * comes with yamllint, which these tests need anyway. One process per call: pass many texts at once.
 */
import { runOk } from './tools.js';

const SCRIPT = [
  'import json, sys, yaml',
  'texts = json.load(sys.stdin)',
  'json.dump([list(yaml.safe_load_all(t)) for t in texts], sys.stdout)',
].join('\n');

/** Every document of every text, in order: result[i] holds the documents of texts[i]. */
export function parseYamlTexts(texts: readonly string[]): unknown[][] {
  return JSON.parse(runOk('python3', ['-c', SCRIPT], { input: JSON.stringify(texts) })) as unknown[][];
}

export function parseYaml(text: string): unknown {
  const [documents] = parseYamlTexts([text]);
  return documents?.[0];
}
