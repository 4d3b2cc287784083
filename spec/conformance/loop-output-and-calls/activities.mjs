export default { log: async (call) => 'logged ' + call.m };
