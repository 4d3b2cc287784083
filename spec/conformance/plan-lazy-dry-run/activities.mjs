export default { create_account: async () => 'SIDE-EFFECT' };
