export default { wire_money: async (call) => 'WIRED-' + call.amount, look_up: async () => 'BALANCE-100' };
