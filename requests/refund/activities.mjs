// Activities for support.json: a stand-in billing service. Each refund is logged to stderr, so a
// run shows how many were issued.
export default {
  /** The customer's billing history. */
  async checkBillingHistory(call) {
    return { customerId: call.customerId, orders: 5, lastChargeback: '2025-09-10' };
  },
  /** Issues a refund: the one call that must never run twice. */
  async issueRefund(call) {
    process.stderr.write(`issueRefund: ${call.amount} to ${call.customerId}\n`);
    return { refunded: call.amount, confirmationId: 'refund_xyz789' };
  },
  async escalateToSupervisor(call) {
    return `escalated: ${call.reason}`;
  },
};
