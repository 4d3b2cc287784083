export default { privileged: async () => 'PRIVILEGED-ACTIVITY-RAN' };
