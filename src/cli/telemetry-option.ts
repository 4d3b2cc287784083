/** The `--otel` options of the executables that run Requests (TEL-1): read here, the OpenTelemetry export itself loaded only when it is on. */
// Types only: nothing of OpenTelemetry loads until the export is on.
import type { CommandTelemetry, TelemetryFlags } from '../telemetry/command-telemetry.js';

export type { CommandTelemetry, TelemetryFlags };

/**
 * `--otel` takes an endpoint only when one follows (an http(s) URL that is not a `.json` Request);
 * alone, it becomes `--otel=`, so `parseArgs` (which has no optional values) reads the flag alone.
 */
export function otelAlone(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--') return [...out, ...argv.slice(index)];
    const next = argv[index + 1];
    if (argument === '--otel' && (next === undefined || !/^https?:\/\//.test(next) || /\.json([?#].*)?$/.test(next))) out.push('--otel=');
    else out.push(argument);
  }
  return out;
}

/** True when spans are to be exported: `--otel`, or the standard endpoint variables (TEL-1). */
export function telemetryWanted(flags: TelemetryFlags, env: Record<string, string | undefined>): boolean {
  if (flags.otel !== undefined) return true;
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Starts the command's export when it is wanted, loading OpenTelemetry only then (TEL-1); else
 * `undefined`. Throws a UsageError for an endpoint that is not an http(s) URL.
 */
export async function startTelemetry(
  flags: TelemetryFlags,
  env: Record<string, string | undefined>,
  serviceName: string,
  say: (line: string) => void,
): Promise<CommandTelemetry | undefined> {
  if (!telemetryWanted(flags, env)) return undefined;
  const { commandTelemetry } = await import('../telemetry/command-telemetry.js');
  return commandTelemetry(flags, env, serviceName, say);
}
