import { describe, expect, it } from 'vitest';
import { parsePromText, selectSamples } from './prom-text.js';

const TEXT = `# HELP tessera_gateway_fleet_nodes Nodes in the fleet view
# TYPE tessera_gateway_fleet_nodes gauge
tessera_gateway_fleet_nodes 4
tessera_gateway_upstream_duration_seconds_count{model="work",node="bench-node1",outcome="OK"} 120
tessera_gateway_upstream_duration_seconds_count{model="work",node="bench-node4",outcome="OK"} 7
tessera_gateway_upstream_duration_seconds_count{model="simple",node="bench-node1",outcome="OK"} 3
`;

describe('parsePromText', () => {
  it('reads samples with and without labels and skips comments', () => {
    const samples = parsePromText(TEXT);
    expect(samples).toHaveLength(4);
    expect(selectSamples(samples, 'tessera_gateway_fleet_nodes')[0]).toEqual({ name: 'tessera_gateway_fleet_nodes', labels: {}, value: 4 });
  });

  it('selects by name and a subset of labels', () => {
    const work = selectSamples(parsePromText(TEXT), 'tessera_gateway_upstream_duration_seconds_count', { model: 'work' });
    expect(work.map((s) => [s.labels.node, s.value])).toEqual([
      ['bench-node1', 120],
      ['bench-node4', 7],
    ]);
  });
});
