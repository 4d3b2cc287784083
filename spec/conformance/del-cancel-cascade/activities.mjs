const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default { wait: async () => { await sleep(1500); return 'waited'; } };
