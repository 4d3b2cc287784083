// A stand-in for an OpenTelemetry collector, to see what delegate-run sends: it takes OTLP/HTTP JSON at /v1/traces and prints
// one line per span, indented under its parent. `node examples/otlp-collector.mjs --port 4318`; Ctrl-C stops it.
import { createServer } from 'node:http';

const portAt = process.argv.indexOf('--port');
const port = portAt < 0 ? 4318 : Number(process.argv[portAt + 1]);
/** Every span received so far, by id, so a child's line is indented under a parent that came in an earlier batch. */
const depths = new Map();

/** An OTLP attribute value as a printable one. */
const plain = (value) => value?.stringValue ?? value?.intValue ?? value?.doubleValue ?? value?.boolValue ?? JSON.stringify(value?.arrayValue?.values ?? null);

createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    if (request.url !== '/v1/traces' || !String(request.headers['content-type']).startsWith('application/json')) {
      response.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const spans = body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    // Parents end after their children, so a batch lists them later: order it by start time.
    spans.sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    for (const span of spans) {
      const depth = span.parentSpanId && depths.has(span.parentSpanId) ? depths.get(span.parentSpanId) + 1 : 0;
      depths.set(span.spanId, depth);
      const attributes = Object.fromEntries(span.attributes.map((attribute) => [attribute.key, plain(attribute.value)]));
      const tokens = attributes['gen_ai.usage.input_tokens'] === undefined ? '' : ` ${attributes['gen_ai.usage.input_tokens']}+${attributes['gen_ai.usage.output_tokens']} tokens`;
      const failed = span.status?.code === 2 ? ` ERROR ${span.status.message}` : '';
      console.log(`${'  '.repeat(depth)}${span.name} (trace ${span.traceId.slice(0, 8)}…)${tokens}${failed}`);
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
}).listen(port, '127.0.0.1', () => console.log(`Taking OTLP/HTTP spans at http://127.0.0.1:${port}/v1/traces`));
