export default {
  logEvent: (_call, _tool, context) => `logged with ${context.length} scoped messages`,
};
