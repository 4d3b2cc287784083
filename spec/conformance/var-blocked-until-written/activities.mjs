const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default { produce: async () => { await sleep(300); return 'PRODUCED-VALUE'; } };
