export default { stamp: async () => 'LOCAL-ACTIVITY-RAN' };
