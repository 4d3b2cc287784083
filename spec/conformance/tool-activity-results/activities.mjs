export default {
  remember: async () => ({ type: 'state', state: { note: 'MESSAGE-FROM-ACTIVITY' } }),
  ping: async () => 'FIRE-AND-FORGET-VALUE',
  impl: async () => 'WRITTEN-BY-IMPL',
};
