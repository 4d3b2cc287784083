export default {
  inspect: async (call, tool, context) => JSON.stringify(context),
  blind: async (call, tool, context) => 'CONTEXT-LENGTH-' + context.length,
};
