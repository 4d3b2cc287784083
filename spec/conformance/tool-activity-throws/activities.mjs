export default { station: async (call) => { throw new Error('STATION-DOWN for ' + call.city); } };
