export default { weather: async (call) => ({ city: call.city, summary: 'SHOWERS-ALL-DAY' }) };
