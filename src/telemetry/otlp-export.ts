/** Sending spans to a collector over OTLP/HTTP (TEL-1, TEL-9): where to, with what headers and name, bounded so a collector down or stalled never holds a run. */
import { ExportResultCode, parseKeyPairsIntoRecord, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type IdGenerator,
  RandomIdGenerator,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { UsageError } from '../protocol/errors.js';

/** The default collector: an OpenTelemetry collector's OTLP/HTTP port on this machine. */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/** How long one export may take by default (the conventions' `OTEL_EXPORTER_OTLP_TIMEOUT` default). */
const DEFAULT_TIMEOUT_MS = 10_000;

/** How long an attribute value may be (`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` overrides it): a captured prompt is cut there (TEL-4). */
const ATTRIBUTE_LENGTH_LIMIT = 64 * 1024;

/** Where spans go and how (TEL-1). */
export interface OtlpSettings {
  /** The full URL spans are posted to: `<endpoint>/v1/traces`. */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  /** How long one export may take before it is given up (TEL-9). */
  timeoutMs: number;
  /** Prompts and answers as attributes (TEL-4). */
  content: boolean;
}

/**
 * The settings of an export from the standard variables and the flags (TEL-1): `--otel <endpoint>`
 * (or `--otel` alone: the variables' endpoint, else localhost:4318) posts to `<endpoint>/v1/traces`;
 * without the flag, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is the URL as given and
 * `OTEL_EXPORTER_OTLP_ENDPOINT` a base. `undefined` when export is off. Throws a UsageError for an
 * endpoint that is not an http(s) URL, naming where it came from.
 */
export function otlpSettings(
  flag: { otel?: string; otelContent?: boolean },
  env: Record<string, string | undefined>,
  serviceName: string,
): OtlpSettings | undefined {
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  let url: string;
  let from: string;
  if (nonEmpty(flag.otel) !== undefined) [url, from] = [tracesUrl(flag.otel as string), '--otel'];
  else if (flag.otel === undefined && env.OTEL_SDK_DISABLED === 'true') return undefined;
  else if (traces !== undefined) [url, from] = [traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  else if (base !== undefined) [url, from] = [tracesUrl(base), 'OTEL_EXPORTER_OTLP_ENDPOINT'];
  else if (flag.otel !== undefined) [url, from] = [tracesUrl(DEFAULT_OTLP_ENDPOINT), '--otel'];
  else return undefined;
  if (!/^https?:\/\/[^/]/.test(url))
    throw new UsageError(`${from} expects an http(s) URL of an OTLP/HTTP collector, such as ${DEFAULT_OTLP_ENDPOINT}; got "${url}".`);
  const headers = parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? '');
  const timeout = Number(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return {
    url,
    headers,
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? serviceName,
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
    content: flag.otelContent === true || /^true$/i.test(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? ''),
  };
}

/** An export started: the provider spans are made by, and how to end it. */
export interface OtlpExport {
  provider: BasicTracerProvider;
  /** True once an export failed (the collector down, refusing, or too slow). */
  readonly failed: boolean;
  /** How many spans the collector took. */
  readonly sent: number;
  /** How many spans have ended, taken by the collector or not yet. */
  readonly ended: number;
  /** Sends what is pending and stops, within the export's time limit (TEL-9); never rejects. */
  shutdown(): Promise<void>;
}

/**
 * Starts an export to the settings' collector (TEL-1). A failed export is said once through `say`
 * and never fails the run (TEL-9); so are spans dropped because they ended faster than the
 * collector took them. `idGenerator` lets `export` keep a recorded trace id (TEL-10); `queueSize`
 * is how many ended spans may wait (the SDK's default 2048 when not given).
 */
export function startOtlpExport(
  settings: OtlpSettings,
  say: (line: string) => void,
  idGenerator: IdGenerator = new RandomIdGenerator(),
  queueSize?: number,
): OtlpExport {
  let ended = 0;
  const exporter = new OnceWarningExporter(new OTLPTraceExporter({ url: settings.url, headers: settings.headers, timeoutMillis: settings.timeoutMs }), (why) =>
    say(`OpenTelemetry: cannot send spans to ${settings.url} (${why}); the run goes on without them.`),
  );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    idGenerator,
    // A captured prompt or tool result (TEL-4) may be megabytes: each attribute value is cut at 64 KiB, unless the standard
    // variables (which the SDK reads from the process's environment) say otherwise.
    ...(process.env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT || process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT
      ? {}
      : { spanLimits: { attributeValueLengthLimit: ATTRIBUTE_LENGTH_LIMIT } }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        exportTimeoutMillis: settings.timeoutMs,
        scheduledDelayMillis: 1000,
        ...(queueSize ? { maxQueueSize: queueSize } : {}),
      }),
      // Counts the spans ended, so spans the batch queue dropped (it says so only to the SDK's own diagnostics) are said (TEL-9).
      {
        onStart() {},
        onEnd() {
          ended += 1;
        },
        forceFlush: () => Promise.resolve(),
        shutdown: () => Promise.resolve(),
      },
    ],
  });
  return {
    provider,
    get failed() {
      return exporter.failed;
    },
    get sent() {
      return exporter.sent;
    },
    get ended() {
      return ended;
    },
    async shutdown() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      // Bounded: a collector that accepts and never answers holds the exit no longer than the export's limit (TEL-9).
      const late = new Promise<void>((done) => {
        timer = setTimeout(() => {
          exporter.fail(`no answer within ${settings.timeoutMs} ms`);
          done();
        }, settings.timeoutMs + 1000);
        timer.unref();
      });
      await Promise.race([provider.shutdown().catch((error: unknown) => exporter.fail(String((error as Error)?.message ?? error))), late]);
      clearTimeout(timer);
      if (ended > exporter.sent) exporter.fail(`${ended - exporter.sent} of ${ended} spans were dropped: they ended faster than the collector took them`);
    },
  };
}

/** An exporter that says its first failure once (TEL-9): the OpenTelemetry SDK would otherwise say nothing. */
class OnceWarningExporter implements SpanExporter {
  failed = false;
  sent = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly warn: (why: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.sent += spans.length;
      else this.fail(result.error?.message ?? 'the export failed');
      done(result);
    });
  }

  /** Records a failure, said the first time only. */
  fail(why: string): void {
    if (this.failed) return;
    this.failed = true;
    this.warn(why);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** `<endpoint>/v1/traces`, one slash between (TEL-1). */
function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
