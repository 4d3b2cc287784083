const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default { nap: async (call) => { await sleep(300); return 'slept ' + call.label; } };
