export default {
  score: async () => 42,
  'HIDDEN-ACTIVITY-NAME': async (call) => call.n + 1,
};
