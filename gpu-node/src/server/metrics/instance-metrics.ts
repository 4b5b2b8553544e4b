/**
 * `tessera_model_instance_info{model, version, instance, kind, device, provider} 1`: where each
 * instance of a READY version runs, the execution provider included (cpu, cuda, webgpu), in the
 * Prometheus "info" style so it joins other families on model and version.
 */
import { Gauge, type Registry } from 'prom-client';
import type { InstanceSnapshot } from '../../models/instance-snapshot.js';

export function registerInstanceMetrics(registry: Registry, instances: () => readonly InstanceSnapshot[]): void {
  new Gauge({
    name: 'tessera_model_instance_info',
    help: 'Model instances of READY versions, labelled with where they run and on which execution provider',
    labelNames: ['model', 'version', 'instance', 'kind', 'device', 'provider'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const i of instances()) {
        this.set({ model: i.model, version: i.version, instance: i.instance, kind: i.kind, device: String(i.device), provider: i.provider }, 1);
      }
    },
  });
}
