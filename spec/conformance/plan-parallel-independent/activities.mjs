const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default {
  fetch_a: async () => { await sleep(250); return 'a'; },
  fetch_b: async () => { await sleep(250); return 'b'; },
  join: async (call) => call.a + '+' + call.b,
};
