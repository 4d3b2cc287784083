// Activities for forecast.json: a stand-in weather service with fixed, deterministic data.
const TODAY = {
  lisbon: { summary: 'sunny, light breeze', highC: 24, rainChance: 0.05 },
  bergen: { summary: 'showers all day', highC: 11, rainChance: 0.9 },
};

export default {
  /** Looks up today's weather; `context` holds only what the tool's _scopes allow (here: input). */
  async get_weather(call) {
    const found = TODAY[String(call.city).toLowerCase()];
    if (!found) throw new Error(`No weather station for "${call.city}". Known: ${Object.keys(TODAY).join(', ')}.`);
    return found;
  },
};
