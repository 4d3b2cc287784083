export default { add: async (call) => call.a + call.b };
