// A loopback OTLP/HTTP collector for the tests: decodes the JSON the exporter posts to /v1/traces into plain spans.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A span as the collector received it, its attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** `''` for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  /** The resource's `service.name`. */
  service: string;
}

/** A running collector. */
export interface OtlpReceiver {
  /** The endpoint to give `--otel` (spans go to `<url>/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Every request's path, content type and headers, in order. */
  requests: { path: string; contentType: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/** How the collector behaves: `down` answers 503; `stall` never answers; `delayMs` answers each export that much later (a slow collector). */
export interface ReceiverOptions {
  mode?: 'ok' | 'down' | 'stall';
  delayMs?: number;
}

/** An OTLP attribute value (`{stringValue}`, `{intValue}`, …) as a plain value. */
function plainValue(value: Record<string, unknown> | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('arrayValue' in value) return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(plainValue);
  return undefined;
}

function attributesOf(list: { key: string; value: Record<string, unknown> }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, plainValue(attribute.value)]));
}

function nanosToMs(value: unknown): number {
  if (typeof value === 'object' && value !== null && 'high' in value) {
    const { high, low } = value as { high: number; low: number };
    return (high * 2 ** 32 + (low >>> 0)) / 1e6;
  }
  return Number(BigInt(String(value)) / 1_000_000n);
}

/** Decodes an OTLP/JSON ExportTraceServiceRequest. */
export function decodeTraces(body: unknown): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of (body as { resourceSpans?: unknown[] }).resourceSpans ?? []) {
    const { resource, scopeSpans } = resourceSpans as { resource?: { attributes?: never }; scopeSpans?: { spans?: Record<string, unknown>[] }[] };
    const service = String(attributesOf(resource?.attributes)['service.name'] ?? '');
    for (const scope of scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: String(span.traceId),
          spanId: String(span.spanId),
          parentSpanId: String(span.parentSpanId ?? ''),
          name: String(span.name),
          kind: Number(span.kind),
          startMs: nanosToMs(span.startTimeUnixNano),
          endMs: nanosToMs(span.endTimeUnixNano),
          attributes: attributesOf(span.attributes as never),
          status: (span.status as { code: number; message?: string } | undefined) ?? { code: 0 },
          events: ((span.events as { name: string; attributes?: never }[] | undefined) ?? []).map((event) => ({
            name: event.name,
            attributes: attributesOf(event.attributes),
          })),
          service,
        });
      }
    }
  }
  return spans;
}

/** Starts a collector on 127.0.0.1 at an ephemeral port. */
export async function startOtlpReceiver(options: ReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const stalled: ServerResponse[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = String(request.headers['content-type'] ?? '');
      requests.push({ path: request.url ?? '', contentType, headers: request.headers });
      if (options.mode === 'stall') {
        stalled.push(response);
        return;
      }
      if (options.mode === 'down') {
        response.writeHead(503).end();
        return;
      }
      if (request.url !== '/v1/traces' || !contentType.startsWith('application/json')) {
        response.writeHead(request.url === '/v1/traces' ? 415 : 404).end();
        return;
      }
      let raw = Buffer.concat(chunks);
      if (request.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      spans.push(...decodeTraces(JSON.parse(raw.toString('utf8'))));
      const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (options.delayMs) setTimeout(answer, options.delayMs);
      else answer();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    async close() {
      for (const response of stalled) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** The spans of one name prefix (`chat `, `execute_tool work`). */
export function spansNamed(spans: readonly ReceivedSpan[], prefix: string): ReceivedSpan[] {
  return spans.filter((span) => span.name.startsWith(prefix));
}

/** The parent of a span among `spans`, or undefined. */
export function parentOf(spans: readonly ReceivedSpan[], span: ReceivedSpan): ReceivedSpan | undefined {
  return spans.find((candidate) => candidate.spanId === span.parentSpanId);
}
