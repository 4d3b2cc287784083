// Counts nothing itself: the trace shows how often each Activity ran.
export default {
  checkBillingHistory: async () => ({ orders: 5, lastChargeback: '2025-09-10' }),
  issueRefund: async (call) => ({ refunded: call.amount, confirmationId: 'refund_xyz789' }),
  escalateToSupervisor: async () => 'escalated',
};
