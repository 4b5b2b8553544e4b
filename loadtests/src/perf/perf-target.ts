/**
 * The server under load, as the tool talks to it: a node directly, or the gateway with API keys.
 * It gives the model's metadata, one inference client per API key (so a request's key, and so its
 * tier, follows from its tag), and the statistics API for the server-side breakdown.
 *
 * Statistics come from --stats-url when given (the node behind a gateway), else from -u itself: the
 * HTTP statistics endpoint, or gRPC ModelStatistics when -i grpc. If the first read fails (a gateway
 * that does not expose statistics), the breakdown is left out and the caller says why.
 */
import { create } from '@bufbuild/protobuf';
import { Client, Metadata, credentials } from '@grpc/grpc-js';
import {
  GRPCInferenceService,
  ModelMetadataRequestSchema,
  ModelStatisticsRequestSchema,
  type StatisticDuration,
} from '../../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { fetchModelStats, sumEntries, type ModelStatsSnapshot } from '../lib/sampling/node-stats.js';
import { parseModelMetadata, type ModelSpec } from './model-inputs.js';
import type { ApiKey, PerfOptions } from './perf-options.js';

const service = clientServiceDefinition(GRPCInferenceService);

export function keyHeaders(key: ApiKey | undefined, header: PerfOptions['apiKeyHeader']): Record<string, string> {
  if (key === undefined) return {};
  return header === 'authorization' ? { authorization: `Bearer ${key.key}` } : { 'x-api-key': key.key };
}

const toMetadata = (headers: Readonly<Record<string, string>>): Metadata => {
  const m = new Metadata();
  for (const [k, v] of Object.entries(headers)) m.set(k, v);
  return m;
};

const duration = (d: StatisticDuration | undefined) => ({ count: Number(d?.count ?? 0n), ns: Number(d?.ns ?? 0n) });

export interface PerfTarget {
  /** Labels of the request tags: the API keys' tiers, or one label when there are no keys. */
  readonly tags: readonly string[];
  /** Where statistics are read, for the report. */
  readonly statsSource: string;
  fetchMetadata(): Promise<ModelSpec>;
  /** One client per tag; `connections` sockets each (HTTP). */
  createClients(connections: number): InferClient[];
  readStats(): Promise<ModelStatsSnapshot>;
  close(): void;
}

export function createPerfTarget(options: PerfOptions): PerfTarget {
  const { host, port, model } = options;
  const keys: (ApiKey | undefined)[] = options.apiKeys.length > 0 ? [...options.apiKeys] : [undefined];
  const headersOf = keys.map((k) => keyHeaders(k, options.apiKeyHeader));
  const firstHeaders = headersOf[0] ?? {};
  const httpBase = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let control: Client | undefined;
  const grpcControl = (): Client => (control ??= new Client(`${host.includes(':') ? `[${host}]` : host}:${port}`, credentials.createInsecure()));
  const version = options.modelVersion ?? '';
  const statsViaGrpc = options.statsUrl === undefined && options.protocol === 'grpc';

  return {
    tags: keys.map((k) => k?.tier ?? 'all'),
    statsSource: options.statsUrl ?? (statsViaGrpc ? `grpc://${host}:${port}` : httpBase),

    async fetchMetadata() {
      if (options.protocol === 'grpc') {
        const request = create(ModelMetadataRequestSchema, { name: model, version });
        const { response } = await callUnary(grpcControl(), service.modelMetadata, request, { metadata: toMetadata(firstHeaders), deadline: Date.now() + 10_000 });
        return parseModelMetadata({
          name: response.name,
          inputs: response.inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape.map(Number) })),
          outputs: response.outputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape.map(Number) })),
        });
      }
      const path = `/v2/models/${encodeURIComponent(model)}${version !== '' ? `/versions/${encodeURIComponent(version)}` : ''}`;
      const response = await fetch(`${httpBase}${path}`, { headers: firstHeaders, signal: AbortSignal.timeout(10_000) });
      const text = await response.text();
      if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
      return parseModelMetadata(JSON.parse(text));
    },

    createClients(connections) {
      return headersOf.map((headers) =>
        options.protocol === 'grpc'
          ? createGrpcInferClient(host, port, headers)
          : createHttpInferClient(host, port, connections, { json: options.json, headers }),
      );
    },

    async readStats() {
      if (options.statsUrl !== undefined) return fetchModelStats(options.statsUrl, model, firstHeaders);
      if (!statsViaGrpc) return fetchModelStats(httpBase, model, firstHeaders);
      const request = create(ModelStatisticsRequestSchema, { name: model, version });
      const { response } = await callUnary(grpcControl(), service.modelStatistics, request, { metadata: toMetadata(firstHeaders), deadline: Date.now() + 10_000 });
      return sumEntries(
        response.modelStats.map((s) => ({
          inference_count: Number(s.inferenceCount),
          execution_count: Number(s.executionCount),
          inference_stats: {
            success: duration(s.inferenceStats?.success),
            fail: duration(s.inferenceStats?.fail),
            queue: duration(s.inferenceStats?.queue),
            compute_input: duration(s.inferenceStats?.computeInput),
            compute_infer: duration(s.inferenceStats?.computeInfer),
            compute_output: duration(s.inferenceStats?.computeOutput),
          },
        })),
        model,
      );
    },

    close() {
      control?.close();
    },
  };
}
