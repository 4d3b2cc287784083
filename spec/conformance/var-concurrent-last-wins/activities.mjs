const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default {
  slow: async () => { await sleep(400); return 'SLOW-RESULT'; },
  fast: async () => { await sleep(20); return 'FAST-RESULT'; },
};
