export default { lookup: async (call) => `ROAD-${call.road}-OPEN` };
