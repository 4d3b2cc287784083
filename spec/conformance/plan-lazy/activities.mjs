export default { create_account: async () => 'SIDE-EFFECT', send_welcome: async () => 'SIDE-EFFECT' };
