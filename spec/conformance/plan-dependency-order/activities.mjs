const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default {
  first: async () => { await sleep(100); return 'A'; },
  second: async (call) => { await sleep(50); return call.v + 'B'; },
  third: async (call) => call.v + 'C',
};
