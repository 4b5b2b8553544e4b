/**
 * Test support: a tiny OTLP/HTTP traces receiver on loopback. It accepts the JSON posts of
 * @opentelemetry/exporter-trace-otlp-http (POST /v1/traces, application/json) and keeps every span,
 * flattened, with the service that sent it. `until(predicate)` resolves on the post that makes the
 * predicate true: tests wait for an event, not a clock.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly statusCode: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
}

export interface OtlpReceiver {
  /** The base URL to configure as the OTLP endpoint (the exporter appends /v1/traces). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Requests that were not a JSON POST to /v1/traces (should stay empty). */
  readonly rejected: string[];
  until(predicate: (spans: readonly ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: { key: string; value: AnyValue }[];
  status?: { code?: number };
}
interface OtlpBody {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

/** Ids arrive as hex in OTLP/JSON; base64 (protobuf-JSON style) is accepted too. */
function hexId(id: string | undefined): string {
  if (id === undefined || id === '') return '';
  return /^[0-9a-f]+$/.test(id) && (id.length === 32 || id.length === 16) ? id : Buffer.from(id, 'base64').toString('hex');
}

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue ?? '';
}

function attributesOf(list: { key: string; value: AnyValue }[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        rejected.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpBody;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const s of scope.spans ?? []) {
            spans.push({
              service,
              name: s.name,
              traceId: hexId(s.traceId),
              spanId: hexId(s.spanId),
              parentSpanId: hexId(s.parentSpanId),
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              statusCode: s.status?.code ?? 0,
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const wake of [...waiters]) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    rejected,
    until(predicate, what, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!predicate(spans)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${what}; received: ${spans.map((s) => `${s.service}/${s.name}`).join(', ')}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
