export default {
  processPayment: async () => {
    throw new Error('card_declined: Your card was declined.');
  },
};
