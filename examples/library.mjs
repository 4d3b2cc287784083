// The weather example of docs/02-activities-and-the-library.md through the library: run with `node examples/library.mjs`.
import { createRuntime, ReplayModel } from 'delegate-run';

/** An Activity: the call's parameters, its tool, the context its scopes allow, and the environment (signal, runChild). */
const getWeather = async (call) => ({ summary: 'sunny', highC: 24, rainChance: 0.05, city: call.city });

const runtime = createRuntime({ root: 'requests/weather', activities: { get_weather: getWeather } });
const request = await runtime.load('requests/weather/forecast.json');
const model = await ReplayModel.fromFile('requests/weather/forecast.cassette.json');
const result = await runtime.run(request, { model, input: { city: 'Lisbon', activity: 'cycling' } });
if (result.ok) {
  console.log(result.output, result.usageTotal);
} else {
  console.error(result.error.code, result.error.message);
  process.exitCode = 1;
}
