export default { act: async (call) => call.x * 2, fail: async () => { throw new Error('nope'); } };
