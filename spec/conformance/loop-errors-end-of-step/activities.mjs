const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default { bad: async () => { throw new Error('EARLY-FAILURE'); }, good: async () => { await sleep(200); return 'GOOD-VALUE'; } };
